; How a declared type and a receiver are read (graph/lang/typetree.go).
(user_type (type_identifier) @type.generic.base (type_arguments (type_projection (_) @type.generic.arg))) @type.generic
(user_type . (type_identifier) @type.same.elem .) @type.same
(nullable_type (_) @type.same.elem) @type.same
(type_identifier) @type.name

(simple_identifier) @expr.name
(this_expression) @expr.name
(navigation_expression (_) @expr.field.object (navigation_suffix (simple_identifier) @expr.field.name)) @expr.field
(call_expression . (_) @expr.call.callee (call_suffix)) @expr.call
(indexing_expression . (_) @expr.index.object) @expr.index
(parenthesized_expression (_) @expr.same.object) @expr.same
(postfix_expression (_) @expr.same.object) @expr.same
