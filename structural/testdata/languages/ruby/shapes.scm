; edit_symbol's shapes: a body_statement is the body without its end.
(method body: (_) @body) @def
(singleton_method body: (_) @body) @def
(class body: (_) @body) @def
(module body: (_) @body) @def
