; edit_symbol's shapes (graph/shapes.go): a definition's body, the template
; around it, and the typedef around a declarator.
(_ body: (_) @body) @def
(template_declaration (_) @inner .) @outer
(type_definition declarator: (_) @inner) @outer
