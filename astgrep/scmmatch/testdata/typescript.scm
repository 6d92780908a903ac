(class_declaration name: (type_identifier) @name body: (class_body [(method_definition name: (property_identifier) @method) (public_field_definition name: (property_identifier) @field)]* )) @class
(call_expression function: (member_expression object: (this) property: (property_identifier) @callee)) @selfcall
(type_annotation (_) @type)
(generic_type name: (type_identifier) @gen type_arguments: (type_arguments (_)+ @arg))
(if_statement condition: (parenthesized_expression (binary_expression left: (_) @l right: (undefined)))) @undef
(_ (comment)+ @comments . (_) @after)
(ERROR) @error
