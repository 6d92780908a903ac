; Locals: a parameter or variable of a function hides an import, class or
; function of the same name, to the end of its block or function.
(formal_parameters (identifier) @name) @local
(formal_parameters (assignment_pattern left: (identifier) @name)) @local
(arrow_function parameter: (identifier) @name) @local
(variable_declarator name: (identifier) @name) @local
(for_in_statement left: (identifier) @name) @local
(catch_clause parameter: (identifier) @name) @local
(statement_block) @local.scope
(arrow_function) @local.scope
(for_statement) @local.scope
(for_in_statement) @local.scope
