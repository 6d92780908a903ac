(function_declaration name: (identifier) @name parameters: (formal_parameters (_)* @param)) @def
(call_expression function: [(identifier) @callee (member_expression object: (_) @obj property: (property_identifier) @callee)] arguments: (arguments . (_)? @first)) @call
(variable_declarator name: (identifier) @var value: (_) @value) @decl
(binary_expression left: (_) @l operator: "===" right: (_) @r) @eq
((identifier) @req (#eq? @req "require"))
(new_expression constructor: (_) @ctor) @new
(ERROR) @error
