; Kotlin for the code graph, added as data (graph.Options.QueryDirs):
; TestLanguageAsData. The grammar has no field names: patterns are
; positional.
(package_header (identifier) @name) @package

(class_declaration (type_identifier) @name) @definition.class
(object_declaration (type_identifier) @name) @definition.class
(class_body (function_declaration (simple_identifier) @name (user_type) @type) @definition.method)
(class_body (function_declaration (simple_identifier) @name) @definition.method)
(function_declaration (simple_identifier) @name (user_type) @type) @definition.function
(function_declaration (simple_identifier) @name) @definition.function

; Constructor properties and class properties are fields with declared
; types.
(class_parameter (binding_pattern_kind) (simple_identifier) @name (_) @type) @field
(class_body (property_declaration (variable_declaration (simple_identifier) @name (_) @type)) @field)

; Locals: parameters and variables, typed as declared, or by the class
; or function a call makes them from.
(function_value_parameters (parameter (simple_identifier) @name (_) @type) @local.param)
(property_declaration (variable_declaration (simple_identifier) @name (_) @type)) @local
(property_declaration (variable_declaration (simple_identifier) @name)
  (call_expression . [(simple_identifier) (navigation_expression)] @type.call)) @local
(property_declaration (variable_declaration (simple_identifier) @name)) @local
[(statements) (lambda_literal)] @local.scope

(call_expression . (simple_identifier) @name) @reference.call
(call_expression . (navigation_expression (_) @receiver . (navigation_suffix (simple_identifier) @name))) @reference.call
(user_type (type_identifier) @name) @reference.type
