; Locals: a parameter or variable of a function hides a function of the
; same name (a function pointer called by name), to the end of its block.
(parameter_declaration declarator: (identifier) @name) @local
(parameter_declaration declarator: (pointer_declarator declarator: (identifier) @name)) @local
(declaration declarator: (identifier) @name) @local
(declaration declarator: (init_declarator declarator: (identifier) @name)) @local
(declaration declarator: (init_declarator declarator: (pointer_declarator declarator: (identifier) @name))) @local
(compound_statement) @local.scope
(for_statement) @local.scope
