; Kotlin for the code graph, added at run time (graph.Options.QueryDirs).
(class_body (function_declaration (simple_identifier) @name) @definition.method)
(function_declaration (simple_identifier) @name) @definition.function
(class_declaration (type_identifier) @name) @definition.class
(object_declaration (type_identifier) @name) @definition.object
(call_expression (simple_identifier) @name) @reference.call
