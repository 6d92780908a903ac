; Locals: a parameter or variable of a method hides a class of the same
; name (list.add(x) with a variable list), to the end of its block.
(formal_parameter name: (identifier) @name) @local
(spread_parameter (variable_declarator name: (identifier) @name)) @local
(local_variable_declaration declarator: (variable_declarator name: (identifier) @name)) @local
(enhanced_for_statement name: (identifier) @name) @local
(catch_formal_parameter name: (identifier) @name) @local
(lambda_expression parameters: (identifier) @name) @local
(inferred_parameters (identifier) @name) @local
(block) @local.scope
(lambda_expression) @local.scope
(for_statement) @local.scope
(enhanced_for_statement) @local.scope
