; Locals: a parameter or variable of a function hides an import, class or
; function of the same name, to the end of its block or function.
(formal_parameters [(required_parameter pattern: (identifier) @name) (optional_parameter pattern: (identifier) @name)] @local) @parameters
(arrow_function parameter: (identifier) @name) @local
