(function_definition name: (identifier) @name parameters: (parameters (identifier)* @param) body: (block . (expression_statement (string) @docstring)?)) @def
(class_definition name: (identifier) @name superclasses: (argument_list (_)* @base)?) @class
(call function: [(identifier) @callee (attribute object: (_) @obj attribute: (identifier) @callee)]) @call
(assignment left: (_) @lhs right: (_) @rhs) @assign
((identifier) @self (#eq? @self "self"))
(import_from_statement module_name: (dotted_name) @module name: (dotted_name (identifier) @imported)) @import
(_ "(" @open)
(ERROR) @error
