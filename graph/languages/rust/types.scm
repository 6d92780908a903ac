; Rust's declared types (see package graph): typed parameters and lets,
; struct fields, function results.
(parameter pattern: (identifier) @name type: (_) @type) @local.param
(let_declaration pattern: (identifier) @name type: (_) @type) @local
(field_declaration name: (field_identifier) @name type: (_) @type) @field
(function_item name: (identifier) @name return_type: (_) @type) @definition.function
; impl Trait for Type: the trait is a base of the type (its implementations
; are listed for a call through the trait).
(impl_item trait: [(type_identifier) (scoped_type_identifier) (generic_type)] @type type: [(type_identifier) (generic_type type: (type_identifier))] @container) @field
