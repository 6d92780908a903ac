; Java's declared types (see package graph): parameters, locals, fields,
; method results, enhanced for, new X(), extends and implements.
(formal_parameter type: (_) @type name: (identifier) @name) @local.param
(local_variable_declaration type: (_) @type declarator: (variable_declarator name: (identifier) @name)) @local
(local_variable_declaration
  declarator: (variable_declarator name: (identifier) @name value: (object_creation_expression type: (_) @type.new))) @local
(enhanced_for_statement type: (_) @type name: (identifier) @name) @local
(field_declaration type: (_) @type declarator: (variable_declarator name: (identifier) @name)) @field
(method_declaration type: (_) @type name: (identifier) @name) @definition.method
(superclass (_) @type) @field
(super_interfaces (type_list (_) @type)) @field
(extends_interfaces (type_list (_) @type)) @field
