; Variables and scopes JavaScript and TypeScript share: a local is
; visible to the end of its block, arrow function or loop.
(variable_declarator name: (identifier) @name) @local
(for_in_statement left: (identifier) @name) @local
(catch_clause parameter: (identifier) @name) @local
(statement_block) @local.scope
(arrow_function) @local.scope
(for_statement) @local.scope
(for_in_statement) @local.scope
