; edit_symbol's shapes (graph/shapes.go): a definition's body, and the
; typedef around a declarator.
(_ body: (_) @body) @def
(type_definition declarator: (_) @inner) @outer
