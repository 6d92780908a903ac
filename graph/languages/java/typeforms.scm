; How a declared type and an expression (a receiver) are read
; (graph/lang/typetree.go).

; Types. List<T>, Map<K, V>: a generic; type_wrappers and element_types
; say which argument a value has.
(type_identifier) @type.name
[(integral_type) (floating_point_type) (boolean_type) (void_type)] @type.name
(identifier) @type.name
(scoped_type_identifier (_) @type.path.seg (type_identifier) @type.path.seg .) @type.path
(generic_type . (_) @type.generic.base (type_arguments (_) @type.generic.arg)) @type.generic
(annotated_type (_) @type.same.elem .) @type.same
(array_type element: (_) @type.slice.elem) @type.slice
; ? extends T names no one type.
(wildcard) @type.other

; Expressions.
(identifier) @expr.name
(this) @expr.name
(super) @expr.name
(type_identifier) @expr.name
(field_access object: (_) @expr.field.object field: (_) @expr.field.name) @expr.field
; a.m(x): the field a.m, then its call; m(x): a call of m.
(method_invocation object: (_) @expr.call.object name: (_) @expr.call.name) @expr.call
(method_invocation !object name: (_) @expr.call.callee) @expr.call
; a.b.T written as a receiver (of the type T).
(scoped_type_identifier (_) @expr.field.object (type_identifier) @expr.field.name .) @expr.field
(array_access array: (_) @expr.index.object) @expr.index
(parenthesized_expression (_) @expr.same.object) @expr.same
(object_creation_expression type: (_) @expr.new.type) @expr.new
(cast_expression type: (_) @expr.assert.type value: (_) @expr.assert.object) @expr.assert
