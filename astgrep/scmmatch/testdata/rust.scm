(function_item name: (identifier) @name parameters: (parameters (parameter pattern: (_) @pat type: (_) @type)*) return_type: (_)? @ret) @def
(impl_item type: (_) @self body: (declaration_list (function_item name: (identifier) @method)*)) @impl
(call_expression function: [(identifier) @callee (field_expression value: (_) @obj field: (field_identifier) @callee) (scoped_identifier path: (_) @path name: (identifier) @callee)]) @call
(macro_invocation macro: (identifier) @macro (#any-of? @macro "println" "format" "vec")) @mac
(let_declaration pattern: (_) @pat !type value: (_)? @value) @let
(_ "?" @try)
(ERROR) @error
