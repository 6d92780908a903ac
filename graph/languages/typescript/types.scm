; TypeScript's declared types (see package graph): typed parameters and
; variables, parameter properties and class fields, return types, and
; the bases a class or interface names.
(required_parameter pattern: (identifier) @name type: (type_annotation) @type) @local.param
(optional_parameter pattern: (identifier) @name type: (type_annotation) @type) @local.param
(variable_declarator name: (identifier) @name type: (type_annotation) @type) @local
; constructor(private db: Db): a parameter property is a field.
(required_parameter (accessibility_modifier) pattern: (identifier) @name type: (type_annotation) @type) @field
(public_field_definition name: [(property_identifier) (private_property_identifier)] @name type: (type_annotation) @type) @field
(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name
  value: (new_expression constructor: [(identifier) (member_expression)] @type.new)) @field
; Return types (they only add a type to what the other patterns define).
(function_declaration name: (identifier) @name return_type: (type_annotation) @type) @definition.function
(class_body (method_definition name: [(property_identifier) (private_property_identifier)] @name return_type: (type_annotation) @type) @definition.method)
(class_body (abstract_method_signature name: (property_identifier) @name return_type: (type_annotation) @type) @definition.method)
(interface_body (method_signature name: (property_identifier) @name return_type: (type_annotation) @type) @definition.method)
(ambient_declaration (function_signature name: (identifier) @name return_type: (type_annotation) @type) @definition.function)
; Bases: extends and implements (a base's methods are the class's).
(class_heritage (extends_clause value: [(identifier) (member_expression)] @type)) @field
(class_heritage (implements_clause [(type_identifier) (nested_type_identifier) (generic_type)] @type)) @field
(extends_type_clause type: (_) @type) @field
; f({gen, n = 1}: Cxt): each name is the field of that name of Cxt.
(required_parameter
  pattern: (object_pattern [(shorthand_property_identifier_pattern) @name
                            (object_assignment_pattern left: (shorthand_property_identifier_pattern) @name)])
  type: (type_annotation) @type.field) @local.param
(optional_parameter
  pattern: (object_pattern [(shorthand_property_identifier_pattern) @name
                            (object_assignment_pattern left: (shorthand_property_identifier_pattern) @name)])
  type: (type_annotation) @type.field) @local.param
; function f(this: Ajv): this is an Ajv in a plain function.
(required_parameter (this) @name type: (type_annotation) @type) @local.param
; An interface's and an object type alias's property signatures are
; fields (an inline object type elsewhere belongs to no class).
(interface_body (property_signature name: (property_identifier) @name type: (type_annotation) @type) @field)
(type_alias_declaration
  value: (object_type (property_signature name: (property_identifier) @name type: (type_annotation) @type) @field))

; xs.forEach((x) => …) with an untyped parameter: an element of xs.
(call_expression
  function: (member_expression object: [(identifier) (member_expression)] @type.elem property: (property_identifier) @_m)
  arguments: (arguments . [
    (arrow_function parameters: (formal_parameters . (required_parameter pattern: (identifier) @name !type)))
    (function_expression parameters: (formal_parameters . (required_parameter pattern: (identifier) @name !type)))
  ] @local)
  (#any-of? @_m "forEach" "map" "filter" "find" "findIndex" "findLast" "findLastIndex" "some" "every" "flatMap"))
