; Locals: a parameter or binding of a function hides a module, type or
; function of the same name, to the end of its block or closure.
(parameter pattern: (identifier) @name) @local
(let_declaration pattern: (identifier) @name) @local
(closure_parameters (identifier) @name) @local
(for_expression pattern: (identifier) @name) @local
(block) @local.scope
(closure_expression) @local.scope
