; Locals: a parameter or variable of a function hides an import, class or
; function of the same name, to the end of its block or function.
(formal_parameters (identifier) @name) @local @parameters
(formal_parameters (assignment_pattern left: (identifier) @name) @local) @parameters
(arrow_function parameter: (identifier) @name) @local
