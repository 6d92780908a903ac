; Lua with no shapes.scm: the code graph indexes it, edit_symbol does not edit it.
(function_statement name: (function_name (identifier) @name)) @definition.function
