; Locals: a parameter or variable of a function hides a function of the
; same name (a function pointer called by name), to the end of its block.
; A parameter keeps its place in its list (@parameters): a function
; pointer passed there is called through it.
(parameter_list (parameter_declaration declarator: (identifier) @name) @local) @parameters
(parameter_list (parameter_declaration declarator: (pointer_declarator declarator: (identifier) @name)) @local) @parameters
(parameter_list (parameter_declaration declarator: (function_declarator
  declarator: (parenthesized_declarator (pointer_declarator declarator: (identifier) @name)))) @local) @parameters
(declaration declarator: (identifier) @name) @local
(declaration declarator: (init_declarator declarator: (identifier) @name)) @local
(declaration declarator: (init_declarator declarator: (pointer_declarator declarator: (identifier) @name))) @local
(compound_statement) @local.scope
(for_statement) @local.scope
