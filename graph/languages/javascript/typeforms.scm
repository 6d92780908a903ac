; How a type (a constructor, a base class) and an expression are read
; (graph/lang/typetree.go). JavaScript has no type syntax: its type
; positions hold names and member expressions.

(identifier) @type.name
(property_identifier) @type.name
(member_expression object: (_) @type.path.seg property: (_) @type.path.seg !optional_chain) @type.path

; Expressions (the others are in exprforms.scm). An optional chain
; (a?.b) is not read (as its text was not).
(call_expression function: (_) @expr.call.callee !optional_chain) @expr.call
(new_expression constructor: (_) @expr.new.type) @expr.new
(parenthesized_expression (_) @expr.same.object) @expr.same
