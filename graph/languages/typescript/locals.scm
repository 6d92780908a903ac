; Locals: a parameter or variable of a function hides an import, class or
; function of the same name, to the end of its block or function.
(required_parameter pattern: (identifier) @name) @local
(optional_parameter pattern: (identifier) @name) @local
(arrow_function parameter: (identifier) @name) @local
