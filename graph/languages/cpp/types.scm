; C++'s declared types (see package graph): parameters, locals, fields,
; bases.
(parameter_declaration type: (_) @type declarator: [
  (identifier) @name
  (pointer_declarator declarator: (identifier) @name)
  (reference_declarator (identifier) @name)
]) @local.param
(declaration type: (_) @type declarator: [
  (identifier) @name
  (init_declarator declarator: (identifier) @name)
  (init_declarator declarator: (pointer_declarator declarator: (identifier) @name))
  (init_declarator declarator: (reference_declarator (identifier) @name))
  (pointer_declarator declarator: (identifier) @name)
]) @local
(field_declaration type: (_) @type declarator: [
  (field_identifier) @name
  (pointer_declarator declarator: (field_identifier) @name)
  (reference_declarator (field_identifier) @name)
]) @field
(base_class_clause [(type_identifier) (qualified_identifier) (template_type)] @type) @field
; Function and method results (a later pattern only adds the type to the
; definition tags.scm made).
(function_definition type: (_) @type declarator: [
  (function_declarator declarator: [(identifier) @name (field_identifier) @name (qualified_identifier name: (identifier) @name)])
  (pointer_declarator declarator: (function_declarator declarator: [(identifier) @name (field_identifier) @name (qualified_identifier name: (identifier) @name)]))
  (reference_declarator (function_declarator declarator: [(identifier) @name (field_identifier) @name (qualified_identifier name: (identifier) @name)]))
]) @definition.function
