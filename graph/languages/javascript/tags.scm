; JavaScript (and JSX): what the code graph extracts (see package graph
; for the captures).

; ES imports are in shared.scm.

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

; A base class (see package graph: a base's methods are the class's).
(class_heritage [(identifier) (member_expression)] @type) @field

; module.exports = X: the module's value is X (what require('./m') binds).
(program
  (expression_statement (assignment_expression
    left: (member_expression object: (identifier) @_m property: (property_identifier) @_e)
    right: (identifier) @name)) @export
  (#eq? @_m "module")
  (#eq? @_e "exports"))

; A JSDoc comment right before a function or method: the types it gives
; its parameters and result (language.json doc_param, doc_return).
(class_body (comment) @doc.comment . (method_definition parameters: (formal_parameters) @doc))
(program (comment) @doc.comment . (function_declaration parameters: (formal_parameters) @doc))
; A JSDoc comment of the module: the type-only imports it declares
; (language.json doc_import: @typedef {import("./m.js").T} T).
((comment) @doc.comment @doc (#match? @doc.comment "@typedef"))
