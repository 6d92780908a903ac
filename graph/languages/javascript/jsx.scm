; JSX, shared by javascript and tsx: a capitalized element is a call to its
; component; a function given as a prop is passed as a value.
(jsx_opening_element name: (identifier) @name (#match? @name "^[A-Z]")) @reference.call
(jsx_self_closing_element name: (identifier) @name (#match? @name "^[A-Z]")) @reference.call
(jsx_opening_element
  name: (member_expression object: (_) @receiver property: (property_identifier) @name)) @reference.call
(jsx_self_closing_element
  name: (member_expression object: (_) @receiver property: (property_identifier) @name)) @reference.call
(jsx_attribute (jsx_expression (identifier) @name)) @reference.value
(jsx_attribute
  (jsx_expression (member_expression object: [(identifier) (this)] @receiver property: (property_identifier) @name))) @reference.value
