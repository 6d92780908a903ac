; What JavaScript and TypeScript (and TSX) share beyond calls, scopes and
; reads: the same node names in all three grammars.

; import D, {f, g as h} from './m'; import * as m from './m'. A default
; import of a relative module binds what the module's default export
; names (export default function f, under any local name), else its
; definition of the same name.
(import_statement
  (import_clause (named_imports (import_specifier name: (_) @import.name alias: (_)? @import.alias)))
  source: (string) @import.module) @import
(import_statement
  (import_clause (namespace_import (identifier) @import.alias))
  source: (string) @import.module) @import
(import_statement
  (import_clause (identifier) @import.default)
  source: (string) @import.module
  (#match? @import.module "^.[.]")) @import
; export default function f() {}, export default class C {}, export
; default X: the module's default export.
(program (export_statement declaration: [
  (function_declaration name: (_) @name)
  (generator_function_declaration name: (_) @name)
  (class_declaration name: (_) @name)
  ]) @export.default
  (#match? @export.default "^export[ \t\n]+default"))
(program (export_statement value: (identifier) @name) @export.default)
; A default import of a package binds the package, like import * as.
(import_statement
  (import_clause (identifier) @import.alias)
  source: (string) @import.module
  (#not-match? @import.module "^.[.]")) @import

; Methods of a class body get the class as container (from nesting).
(class_body
  (method_definition name: (property_identifier) @name (#eq? @name "constructor")) @definition.constructor)
; get x() {...}: a getter, which runs where x is read (reads.scm).
(class_body (method_definition "get" name: [(property_identifier) (private_property_identifier)] @name) @definition.getter)
(class_body (method_definition name: [(property_identifier) (private_property_identifier)] @name) @definition.method)

; const f = () => ..., const f = function () {...}: functions by name.
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

; Methods of object literals are methods with no container: reached only
; through the object (a receiver), never by a bare name.
(object (method_definition "get" name: (property_identifier) @name) @definition.getter)
(object (method_definition name: (property_identifier) @name) @definition.method)
(object
  (pair key: (property_identifier) @name value: (function_expression)) @definition.method)
; An arrow function's this is the one around it: its @self is "=>", so
; this.m() in {upgrade: () => this.m()} inside a class's method is the
; class's m.
(object
  (pair key: (property_identifier) @name value: (arrow_function "=>" @self)) @definition.method)

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

; X.prototype.m = function () {}: a method of X; X.m = function () {}: a
; member of X (a static method, or a namespace object's function).
(expression_statement
  (assignment_expression
    left: (member_expression
      object: (member_expression object: (identifier) @container property: (property_identifier) @_proto)
      property: (property_identifier) @name)
    right: [(function_expression) (arrow_function) (generator_function)]) @definition.method
  (#eq? @_proto "prototype"))
(expression_statement
  (assignment_expression
    left: (member_expression object: (identifier) @container property: (property_identifier) @name)
    right: [(function_expression) (arrow_function) (generator_function)]) @definition.method
  (#not-any-of? @container "exports" "module" "window" "globalThis" "self" "this"))
; var g = (exports.g = function g() {}): g, exported as it is defined.
(variable_declarator
  name: (identifier) @name
  value: (parenthesized_expression
    (assignment_expression right: [(function_expression) (arrow_function) (generator_function)]))) @definition.function
