; How a type (a constructor, a base class) and an expression are read
; (graph/lang/typetree.go). JavaScript has no type syntax: its type
; positions hold names and member expressions.

(identifier) @type.name
(property_identifier) @type.name
(member_expression object: (_) @type.path.seg property: (_) @type.path.seg !optional_chain) @type.path

; Expressions. An optional chain (a?.b) is not read (as its text was
; not).
(identifier) @expr.name
(this) @expr.name
(super) @expr.name
(property_identifier) @expr.name
(private_property_identifier) @expr.name
(member_expression object: (_) @expr.field.object property: (_) @expr.field.name !optional_chain) @expr.field
(subscript_expression object: (_) @expr.index.object !optional_chain) @expr.index
(call_expression function: (_) @expr.call.callee !optional_chain) @expr.call
(new_expression constructor: (_) @expr.new.type) @expr.new
(parenthesized_expression (_) @expr.same.object) @expr.same
