; Variables and scopes JavaScript and TypeScript share: a local is
; visible to the end of its block, arrow function or loop.
(variable_declarator name: (identifier) @name) @local
(for_in_statement left: (identifier) @name) @local
(catch_clause parameter: (identifier) @name) @local
(statement_block) @local.scope
(arrow_function) @local.scope
(for_statement) @local.scope
(for_in_statement) @local.scope
; An object literal's methods are reached through the object, so they are
; not names of the module (a scope marks them local) — except in
; module.exports = {...} and export default {...}.
(arguments (object) @local.scope)
(variable_declarator value: (object) @local.scope)
(return_statement (object) @local.scope)
(pair value: (object) @local.scope)
(array (object) @local.scope)
