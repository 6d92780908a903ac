; How a declared type and an expression (a receiver) are read
; (graph/lang/typetree.go).

; Types. A reference (&T, &mut T, &'a T) has T's members, as dyn T and
; impl T do; *const T is a pointer.
(type_identifier) @type.name
(primitive_type) @type.name
(identifier) @type.name
[(crate) (self) (super)] @type.name
(scoped_type_identifier path: (_) @type.path.seg name: (_) @type.path.seg) @type.path
(scoped_identifier path: (_) @type.path.seg name: (_) @type.path.seg) @type.path
(reference_type type: (_) @type.same.elem) @type.same
(dynamic_type trait: (_) @type.same.elem) @type.same
(abstract_type trait: (_) @type.same.elem) @type.same
(pointer_type type: (_) @type.pointer.elem) @type.pointer
; Box<T>, Vec<T>, Option<T>: a generic; type_wrappers say which are T.
(generic_type type: (_) @type.generic.base type_arguments: (type_arguments (_) @type.generic.arg)) @type.generic
(tuple_type (_) @type.tuple.item) @type.tuple
; Types whose members the resolver does not follow (an array's element
; was not read from its text either).
[(array_type) (unit_type) (function_type) (never_type) (bounded_type) (qualified_type)
 (lifetime) (removed_trait_bound) (macro_invocation)] @type.other

; Expressions.
(identifier) @expr.name
(self) @expr.name
(crate) @expr.name
(super) @expr.name
(type_identifier) @expr.name
(field_identifier) @expr.name
(field_expression value: (_) @expr.field.object field: (_) @expr.field.name) @expr.field
(call_expression function: (_) @expr.call.callee) @expr.call
(index_expression . (_) @expr.index.object) @expr.index
(unary_expression "*" (_) @expr.deref.object) @expr.deref
(reference_expression value: (_) @expr.addr.object) @expr.addr
(parenthesized_expression (_) @expr.same.object) @expr.same
(scoped_identifier path: (_) @expr.path.object name: (_) @expr.path.name) @expr.path
