; C's declared types (see package graph): parameters, locals, struct and
; union fields, initialized file-level variables, function results. The
; type is the specifier alone (the declarator holds the pointer), so a
; pointer's members are its target's: s->ops->write reads s's struct,
; then its field ops.
(parameter_declaration type: (_) @type declarator: [
  (identifier) @name
  (pointer_declarator declarator: (identifier) @name)
  (pointer_declarator declarator: (pointer_declarator declarator: (identifier) @name))
]) @local.param
(declaration type: (_) @type declarator: [
  (identifier) @name
  (pointer_declarator declarator: (identifier) @name)
  (init_declarator declarator: (identifier) @name)
  (init_declarator declarator: (pointer_declarator declarator: (identifier) @name))
]) @local
(field_declaration type: (_) @type declarator: [
  (field_identifier) @name
  (pointer_declarator declarator: (field_identifier) @name)
]) @field
(translation_unit
  (declaration type: (_) @type
    declarator: (init_declarator declarator: [(identifier) @name (pointer_declarator declarator: (identifier) @name)])) @definition.variable)
; A later pattern only adds the result to the function tags.scm defines.
(function_definition type: (_) @type declarator: [
  (function_declarator declarator: (identifier) @name . parameters: (parameter_list))
  (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
]) @definition.function
; A function stored in a struct's field by a designated initializer
; (struct ops file_ops = { .write = file_write }, and in an array of
; them): a call through the field (s->ops->write()) may run it.
(declaration
  type: [(struct_specifier name: (type_identifier) @container) (type_identifier) @container]
  declarator: (init_declarator value: (initializer_list (initializer_pair
    designator: (field_designator (field_identifier) @name)
    value: [(identifier) (pointer_expression argument: (identifier))] @type.expr)))) @field
(declaration
  type: [(struct_specifier name: (type_identifier) @container) (type_identifier) @container]
  declarator: (init_declarator value: (initializer_list (initializer_list (initializer_pair
    designator: (field_designator (field_identifier) @name)
    value: [(identifier) (pointer_expression argument: (identifier))] @type.expr))))) @field
