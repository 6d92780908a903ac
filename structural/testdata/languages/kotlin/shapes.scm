; edit_symbol's shapes: the grammar names no fields, so a body is the
; child of its kind.
(function_declaration (function_body) @body) @def
(class_declaration (class_body) @body) @def
(object_declaration (class_body) @body) @def
