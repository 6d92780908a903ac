(function_declaration name: (identifier) @name body: (block . (_) @first (_)? @second)) @def
(method_declaration receiver: (parameter_list (parameter_declaration type: [(type_identifier) @recv (pointer_type (type_identifier) @recv)])) name: (field_identifier) @name) @def
(call_expression function: [(identifier) @callee (selector_expression operand: (_) @obj field: (field_identifier) @callee)] arguments: (argument_list (_)* @arg)) @call
(short_var_declaration left: (expression_list (identifier)+ @lhs) right: (expression_list . (_) @rhs .)) @assign
((identifier) @err (#eq? @err "err"))
((identifier) @exported (#match? @exported "^[A-Z]") (#not-any-of? @exported "String" "Error"))
(binary_expression left: (_) @l operator: ["==" "!="] right: (nil)) @nilcheck
(if_statement !initializer condition: (_) @cond) @if
(composite_literal type: (_) @t body: (literal_value (keyed_element)* @kv)) @lit
(parameter_declaration name: (identifier) @p1 name: (identifier) @p2)
(_ (comment) @doc . (function_declaration) @documented)
(ERROR) @error
(return_statement (expression_list . (identifier) @r1 . (_) @r2)) @ret
