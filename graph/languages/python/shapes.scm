; edit_symbol's shapes (graph/shapes.go): a definition's body, its
; decorators, and a block's docstring.
(_ body: (_) @body) @def
(decorated_definition definition: (_) @inner) @outer
(block . (expression_statement (string)) @doc)
