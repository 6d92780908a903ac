; TypeScript: what the code graph extracts (see package graph for the
; captures). The tsx folder holds the same patterns plus JSX.

; ES imports are in ../javascript/shared.scm.
; import m = require('./m').
(import_statement
  (import_require_clause (identifier) @import.alias source: (string) @import.module)) @import

; Definitions. Members of a class, interface, enum or namespace get it
; as container.
(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(class name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(type_alias_declaration name: (type_identifier) @name) @definition.type
(internal_module name: (identifier) @name) @definition.namespace
(module name: (identifier) @name) @definition.module
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
; `declare function f(): T;`. Overload signatures are not definitions:
; with the implementation they would make every call a candidate.
(ambient_declaration (function_signature name: (identifier) @name) @definition.function)

(class_body (abstract_method_signature name: (property_identifier) @name) @definition.method)
(class_body
  (public_field_definition
    name: [(property_identifier) (private_property_identifier)] @name
    value: [(arrow_function) (function_expression)]) @definition.method)
(interface_body (method_signature name: (property_identifier) @name) @definition.method)

; Top-level const bindings of plain values are constants.
(program
  (lexical_declaration "const"
    (variable_declarator name: (identifier) @name
      value: [(number) (string) (template_string) (true) (false) (null) (array) (object)
              (regex) (binary_expression) (unary_expression) (new_expression) (member_expression)
              (as_expression) (satisfies_expression)]) @definition.constant))
(program
  (export_statement declaration: (lexical_declaration "const"
    (variable_declarator name: (identifier) @name
      value: [(number) (string) (template_string) (true) (false) (null) (array) (object)
              (regex) (binary_expression) (unary_expression) (new_expression) (member_expression)
              (as_expression) (satisfies_expression)]) @definition.constant)))

; Type uses: annotations, generics, extends and implements. A class
; extends a value (an identifier), not a type.
(extends_clause value: (identifier) @name) @reference.type
(extends_clause value: (member_expression object: (_) @receiver property: (property_identifier) @name)) @reference.type
(nested_type_identifier module: (_) @receiver name: (type_identifier) @name) @reference.type
(type_identifier) @name @reference.type
