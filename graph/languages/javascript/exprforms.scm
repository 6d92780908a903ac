; The expressions JavaScript and TypeScript read alike
; (graph/lang/typetree.go), after each one's typeforms.scm, which has
; the rest: a call (TypeScript's with type arguments not read), new,
; parentheses. An optional chain (a?.b) is not read (as its text was
; not).
(identifier) @expr.name
(this) @expr.name
(super) @expr.name
(property_identifier) @expr.name
(private_property_identifier) @expr.name
(member_expression object: (_) @expr.field.object property: (_) @expr.field.name !optional_chain) @expr.field
(subscript_expression object: (_) @expr.index.object !optional_chain) @expr.index
