; How a declared type and an expression (a receiver) are read
; (graph/lang/typetree.go).

; Types. A declaration's type is its specifier alone: a pointer, an
; array or a function pointer is written in the declarator, so the type
; of p in `const struct S *p` is struct S, whose members p reaches.
(type_identifier) @type.name
(primitive_type) @type.name
[(struct_specifier name: (_) @type.same.elem)
 (union_specifier name: (_) @type.same.elem)
 (enum_specifier name: (_) @type.same.elem)] @type.same
; A cast's type, (const T *)x.
(type_descriptor type: (_) @type.same.elem) @type.same
; Types that name no members: unsigned long, a struct written in place
; without a tag, a macro standing for a type.
[(sized_type_specifier) (struct_specifier) (union_specifier) (enum_specifier)] @type.other

; Expressions: a->b and a.b are one node (a pointer's members are its
; target's), (*p), &x, a[i], f(), casts.
(identifier) @expr.name
(field_identifier) @expr.name
(type_identifier) @expr.name
(field_expression argument: (_) @expr.field.object field: (_) @expr.field.name) @expr.field
(call_expression function: (_) @expr.call.callee) @expr.call
(subscript_expression argument: (_) @expr.index.object) @expr.index
(pointer_expression "*" argument: (_) @expr.deref.object) @expr.deref
(pointer_expression "&" argument: (_) @expr.addr.object) @expr.addr
(parenthesized_expression (_) @expr.same.object) @expr.same
(cast_expression type: (_) @expr.assert.type value: (_) @expr.assert.object) @expr.assert
