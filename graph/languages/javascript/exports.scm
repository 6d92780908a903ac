; What JavaScript and TypeScript (and TSX) share beyond calls and scopes:
; the same node names in all three grammars.

; Re-exports, as imports the module's users see through it (language.json
; "reexports"): export * from './m'; export {f, g as h} from './m'.
(export_statement "*" @import.alias source: (string) @import.module) @import
(export_statement
  (export_clause (export_specifier name: (_) @import.name alias: (_)? @import.alias))
  source: (string) @import.module) @import

; Top-level consts made by a call are constants too (export const parse =
; makeParse(...), a factory's function): calls by their name lead there.
; require() is an import, not a definition.
(program
  (lexical_declaration "const"
    (variable_declarator name: (identifier) @name
      value: (call_expression function: (_) @_fn)) @definition.constant)
  (#not-eq? @_fn "require"))
(program
  (export_statement declaration: (lexical_declaration "const"
    (variable_declarator name: (identifier) @name
      value: (call_expression function: (_) @_fn)) @definition.constant))
  (#not-eq? @_fn "require"))

; CommonJS: exports.f = function () {}; module.exports.f = () => ...
(program
  (expression_statement
    (assignment_expression
      left: (member_expression object: (identifier) @_e property: (property_identifier) @name)
      right: [(function_expression) (arrow_function)]) @definition.function)
  (#eq? @_e "exports"))
(program
  (expression_statement
    (assignment_expression
      left: (member_expression
        object: (member_expression object: (identifier) @_m property: (property_identifier) @_e)
        property: (property_identifier) @name)
      right: [(function_expression) (arrow_function)]) @definition.function)
  (#eq? @_m "module")
  (#eq? @_e "exports"))
