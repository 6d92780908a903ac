; How a declared type and an expression are read (graph/lang/typetree.go).

(type_annotation (_) @type.same.elem) @type.same
(type_identifier) @type.name
(identifier) @type.name
(property_identifier) @type.name
(member_expression object: (_) @type.path.seg property: (_) @type.path.seg !optional_chain) @type.path
(predefined_type) @type.name
(nested_type_identifier module: (_) @type.path.seg name: (_) @type.path.seg) @type.path
(nested_identifier object: (_) @type.path.seg property: (_) @type.path.seg) @type.path
(generic_type name: (_) @type.generic.base) @type.generic
(generic_type type_arguments: (type_arguments (_) @type.generic.arg)) @type.generic
(array_type (_) @type.slice.elem) @type.slice
(readonly_type (_) @type.same.elem) @type.same
(parenthesized_type (_) @type.same.elem) @type.same
(union_type (_) @type.union.arm) @type.union
(literal_type (null)) @type.null
(literal_type (undefined)) @type.null
; Types whose members the resolver does not follow.
[(literal_type) (intersection_type) (function_type) (constructor_type) (object_type) (tuple_type)
 (type_query) (index_type_query) (lookup_type) (conditional_type) (template_literal_type)
 (infer_type) (type_predicate) (asserts) (this_type) (existential_type)] @type.other

; Expressions (the others are javascript's exprforms.scm). An optional
; chain (a?.b) and a call with type arguments (f<T>()) are not read (as
; their text was not).
(call_expression function: (_) @expr.call.callee !type_arguments !optional_chain) @expr.call
(new_expression constructor: (_) @expr.new.type) @expr.new
(parenthesized_expression (_) @expr.same.object) @expr.same
(non_null_expression (_) @expr.same.object) @expr.same
