; edit_symbol's shapes (graph/shapes.go): a definition's body.
(_ body: (_) @body) @def
