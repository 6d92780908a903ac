; JavaScript (and JSX): what the code graph extracts (see package graph
; for the captures).

; import D, {f, g as h} from './m'; import * as m from './m'. A default
; import binds the module's definition of the same name (the usual
; `export default class D`); the index has no default-export record.
(import_statement
  (import_clause (named_imports (import_specifier name: (_) @import.name alias: (_)? @import.alias)))
  source: (string) @import.module) @import
(import_statement
  (import_clause (namespace_import (identifier) @import.alias))
  source: (string) @import.module) @import
(import_statement
  (import_clause (identifier) @import.name)
  source: (string) @import.module
  (#match? @import.module "^.[.]")) @import
; A default import of a package binds the package, like import * as.
(import_statement
  (import_clause (identifier) @import.alias)
  source: (string) @import.module
  (#not-match? @import.module "^.[.]")) @import

; const m = require('./m'); const {f} = require('./m').
(variable_declarator
  name: (identifier) @import.alias
  value: (call_expression function: (identifier) @_req arguments: (arguments . (string) @import.module))
  (#eq? @_req "require")) @import
(variable_declarator
  name: (object_pattern (shorthand_property_identifier_pattern) @import.name)
  value: (call_expression function: (identifier) @_req arguments: (arguments . (string) @import.module))
  (#eq? @_req "require")) @import

; Definitions. A method of a class body gets the class as container.
(class_declaration name: (identifier) @name) @definition.class
(class name: (identifier) @name) @definition.class
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(class_body
  (field_definition
    property: [(property_identifier) (private_property_identifier)] @name
    value: [(arrow_function) (function_expression)]) @definition.method)

; Top-level const bindings of plain values are constants.
(program
  (lexical_declaration "const"
    (variable_declarator name: (identifier) @name
      value: [(number) (string) (template_string) (true) (false) (null) (array) (object)
              (regex) (binary_expression) (unary_expression) (new_expression) (member_expression)]) @definition.constant))
(program
  (export_statement declaration: (lexical_declaration "const"
    (variable_declarator name: (identifier) @name
      value: [(number) (string) (template_string) (true) (false) (null) (array) (object)
              (regex) (binary_expression) (unary_expression) (new_expression) (member_expression)]) @definition.constant)))

; A base class is a type use.
(class_heritage (identifier) @name) @reference.type
(class_heritage (member_expression object: (_) @receiver property: (property_identifier) @name)) @reference.type
