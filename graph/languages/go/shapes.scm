; edit_symbol's shapes (graph/shapes.go): a definition's body, and the
; declaration that holds one spec alone (type Foo struct{} around its spec).
(_ body: (_) @body) @def
(type_spec type: (struct_type (field_declaration_list) @body)) @def
(type_spec type: (interface_type) @body) @def
(type_declaration . (type_spec) @inner .) @outer
(type_declaration . (type_alias) @inner .) @outer
(const_declaration . (const_spec) @inner .) @outer
(var_declaration . (var_spec) @inner .) @outer
