; edit_symbol's shapes (graph/shapes.go): a definition's body (a function's
; bound to a name too), and what wraps it alone (export, const f = …).
(_ body: (_) @body) @def
(variable_declarator value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)]) @def
(pair value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)]) @def
(export_statement declaration: (_) @inner) @outer
(lexical_declaration . (variable_declarator) @inner .) @outer
(variable_declaration . (variable_declarator) @inner .) @outer
