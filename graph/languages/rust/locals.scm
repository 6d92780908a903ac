; Locals: a parameter or binding of a function hides a module, type or
; function of the same name, to the end of its block or closure.
; A parameter keeps its place in its list (@parameters); self takes the
; first, which a call on a receiver gives no argument.
(parameters (parameter pattern: (identifier) @name) @local) @parameters
(parameters (self_parameter (self) @name) @local) @parameters
(let_declaration pattern: (identifier) @name) @local
(closure_parameters (identifier) @name) @local
(for_expression pattern: (identifier) @name) @local
(block) @local.scope
(closure_expression) @local.scope
