; How a declared type (an annotation, a base class, a constructor) and an
; expression (a receiver, a callee, a value assigned) are read
; (graph/lang/typetree.go).

; Types. An annotation is a (type) around an expression; None alone is the
; name None (as its text was read), None in a union is null.
(type (none)) @type.name
(type (_) @type.same.elem) @type.same
(identifier) @type.name
(attribute object: (_) @type.path.seg attribute: (_) @type.path.seg) @type.path
; list[T], Optional[T], dict[K, V], Type[X]: a generic; the language's
; type_wrappers and element_types say which argument a value has.
(generic_type (identifier) @type.generic.base (type_parameter (type) @type.generic.arg)) @type.generic
; typing.Optional[T], t.Type["X"]: written as a subscript.
(subscript value: (_) @type.generic.base subscript: (_) @type.generic.arg) @type.generic
; A forward reference, "Foo": the name in the string. The grammar does not
; parse a string's content: "m.Foo" is left to the text reader.
(string . (string_start) . (string_content) @type.same.elem . (string_end) .) @type.same
((string_content) @type.name (#match? @type.name "^[A-Za-z_][A-Za-z_0-9]*$"))
(binary_operator left: (_) @type.union.arm operator: "|" right: (_) @type.union.arm) @type.union
(none) @type.null
; Types whose members the resolver does not follow.
[(list) (ellipsis) (splat_type) (member_type) (constrained_type)] @type.other

; Expressions.
(identifier) @expr.name
(attribute object: (_) @expr.field.object attribute: (_) @expr.field.name) @expr.field
(call function: (_) @expr.call.callee) @expr.call
(subscript value: (_) @expr.index.object) @expr.index
(parenthesized_expression (_) @expr.same.object) @expr.same
; A literal: the language's literal_types give its type from its text.
[(string) (concatenated_string) (dictionary) (list) (dictionary_comprehension) (list_comprehension)] @expr.literal
