; How a declared type and an expression are read (graph/lang/typetree.go):
; each pattern describes one node kind; @type.<form> / @expr.<op> is the
; node, @type.<form>.<part> / @expr.<op>.<part> its parts. Run only at the
; nodes tags.scm captures as a type (@type, @type.new, ...) or an
; expression (@receiver, @type.call, @type.expr, ...), then at their parts.

; Types.
(type_identifier) @type.name
(package_identifier) @type.name
(identifier) @type.name
(field_identifier) @type.name
(qualified_type package: (_) @type.path.seg name: (_) @type.path.seg) @type.path
(selector_expression operand: (identifier) @type.path.seg field: (_) @type.path.seg) @type.path
(pointer_type (_) @type.pointer.elem) @type.pointer
(parenthesized_type (_) @type.same.elem) @type.same
(type_elem . (_) @type.same.elem .) @type.same
(negated_type (_) @type.same.elem) @type.same
(slice_type element: (_) @type.slice.elem) @type.slice
(array_type element: (_) @type.slice.elem) @type.slice
(implicit_length_array_type element: (_) @type.slice.elem) @type.slice
(map_type key: (_) @type.map.key value: (_) @type.map.elem) @type.map
(channel_type value: (_) @type.chan.elem) @type.chan
(generic_type type: (_) @type.generic.base) @type.generic
(generic_type type_arguments: (type_arguments (type_elem (_) @type.generic.arg))) @type.generic
(function_type result: (_) @type.func.result) @type.func
(function_type) @type.func
; A result list, (*X, error) or (a, b int): one item per name.
(parameter_list (parameter_declaration name: (_) @type.tuple.name)) @type.tuple
(parameter_list (parameter_declaration type: (_) @type.tuple.item)) @type.tuple
(parameter_list) @type.tuple
; Types written in place: a field per name, else embedded.
(struct_type (field_declaration_list (field_declaration name: (_) @type.struct.name))) @type.struct
(struct_type (field_declaration_list (field_declaration type: (_) @type.struct.field))) @type.struct
(struct_type) @type.struct
(interface_type (type_elem . (_) @type.interface.field .)) @type.interface
(interface_type) @type.interface
(type_constraint (_) @type.union.arm) @type.union
(type_elem (_) @type.union.arm (_) @type.union.arm) @type.union

; Expressions.
(identifier) @expr.name
(type_identifier) @expr.name
(field_identifier) @expr.name
(package_identifier) @expr.name
(selector_expression operand: (_) @expr.field.object field: (_) @expr.field.name) @expr.field
(call_expression function: (_) @expr.call.callee !type_arguments) @expr.call
(index_expression operand: (_) @expr.index.object) @expr.index
(type_assertion_expression operand: (_) @expr.assert.object type: (_) @expr.assert.type) @expr.assert
(unary_expression operator: "*" operand: (_) @expr.deref.object) @expr.deref
(unary_expression operator: "&" operand: (_) @expr.addr.object) @expr.addr
(parenthesized_expression (_) @expr.same.object) @expr.same
(composite_literal type: (_) @expr.literal.type) @expr.literal
; a[b[i]] parses as a type instantiation; read as an index, as the text is.
(type_instantiation_expression type: (_) @expr.index.object) @expr.index
