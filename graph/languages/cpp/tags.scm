; C++: what the code graph extracts (see package graph for the captures).

(preproc_include path: [(string_literal) (system_lib_string)] @import.module) @import

; Types and namespaces; members nested in them get them as container.
(class_specifier name: (type_identifier) @name body: (_)) @definition.class
(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.union
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
(namespace_definition name: (namespace_identifier) @name) @definition.namespace
(alias_declaration name: (type_identifier) @name) @definition.type
; A typedef's definition is its name, so a struct inside it is not nested.
(type_definition declarator: (type_identifier) @name @definition.type)

; Out-of-line members, T C::m() {...}: the scope is the container; C::C
; is a constructor. Listed before plain functions.
(function_definition
  declarator: [
    (function_declarator declarator: (qualified_identifier scope: (namespace_identifier) @container name: (identifier) @name))
    (function_declarator declarator: (qualified_identifier scope: (template_type name: (type_identifier) @container) name: (identifier) @name))
    (pointer_declarator declarator: (function_declarator declarator: (qualified_identifier scope: (namespace_identifier) @container name: (identifier) @name)))
    (reference_declarator (function_declarator declarator: (qualified_identifier scope: (namespace_identifier) @container name: (identifier) @name)))
  ]
  (#eq? @container @name)) @definition.constructor
(function_definition
  declarator: [
    (function_declarator declarator: (qualified_identifier scope: (namespace_identifier) @container name: (identifier) @name))
    (function_declarator declarator: (qualified_identifier scope: (template_type name: (type_identifier) @container) name: (identifier) @name))
    (pointer_declarator declarator: (function_declarator declarator: (qualified_identifier scope: (namespace_identifier) @container name: (identifier) @name)))
    (reference_declarator (function_declarator declarator: (qualified_identifier scope: (namespace_identifier) @container name: (identifier) @name)))
  ]) @definition.method

; Members defined in a class body (pure virtual ones too: they have no
; other definition); a constructor is named by a plain identifier there.
(field_declaration_list
  (function_definition declarator: (function_declarator declarator: (identifier) @name)) @definition.constructor)
(function_definition
  declarator: [
    (function_declarator declarator: (field_identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (field_identifier) @name))
    (reference_declarator (function_declarator declarator: (field_identifier) @name))
  ]) @definition.method

; Free functions (a declaration alone is not a definition).
(function_definition
  declarator: [
    (function_declarator declarator: (identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    (reference_declarator (function_declarator declarator: (identifier) @name))
  ]) @definition.function

(preproc_def name: (identifier) @name value: (_)) @definition.constant
(preproc_function_def name: (identifier) @name) @definition.macro

; const and constexpr objects at file or namespace level are constants.
(translation_unit
  (declaration
    (type_qualifier) @_q
    declarator: (init_declarator declarator: (identifier) @name)
    (#any-of? @_q "const" "constexpr")) @definition.constant)
(declaration_list
  (declaration
    (type_qualifier) @_q
    declarator: (init_declarator declarator: (identifier) @name)
    (#any-of? @_q "const" "constexpr")) @definition.constant)

; Calls into std:: (std::sort, std::make_unique<T>) are calls into the
; library, not to a same-named member of the project.
(call_expression
  function: (qualified_identifier scope: (namespace_identifier) @name)
  (#eq? @name "std")) @reference.call

; Calls: f(), f<T>(), obj.m(), p->m(), this->m(), ns::f(), C::f().
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (template_function name: (identifier) @name)) @reference.call
(call_expression function: (field_expression argument: (_) @receiver field: (field_identifier) @name)) @reference.call
(call_expression
  function: (field_expression argument: (_) @receiver field: (template_method name: (field_identifier) @name))) @reference.call
(call_expression
  function: (qualified_identifier
    scope: (_) @receiver
    name: [(identifier) @name (template_function name: (identifier) @name)])
  (#not-eq? @receiver "std")) @reference.call
; a::b::f(): the innermost scope is the receiver.
(call_expression
  function: (qualified_identifier
    name: (qualified_identifier scope: (_) @receiver name: [(identifier) @name (template_function name: (identifier) @name)]))
  (#not-eq? @receiver "std")) @reference.call

; Constructions are calls to the class: new C(...), C x(...), C x{...}.
(new_expression type: (type_identifier) @name) @reference.call
(new_expression type: (qualified_identifier scope: (_) @receiver name: (type_identifier) @name)) @reference.call
(declaration
  type: (type_identifier) @name
  declarator: (init_declarator value: [(argument_list) (initializer_list)])) @reference.call
(declaration
  type: (qualified_identifier scope: (_) @receiver name: (type_identifier) @name)
  declarator: (init_declarator value: [(argument_list) (initializer_list)])
  (#not-eq? @receiver "std")) @reference.call

; A function passed as an argument or stored. Passed to a call, its
; place among the call's @arguments is kept: a call of that parameter in
; the callee runs it.
(call_expression arguments: (argument_list (identifier) @name) @arguments) @reference.value
(call_expression arguments: (argument_list (qualified_identifier scope: (_) @receiver name: (identifier) @name)) @arguments) @reference.value
(argument_list (identifier) @name) @reference.value
(argument_list (qualified_identifier scope: (_) @receiver name: (identifier) @name)) @reference.value
(initializer_list (identifier) @name) @reference.value
(init_declarator value: (identifier) @name) @reference.value
(assignment_expression right: (identifier) @name) @reference.value

; Type uses.
(qualified_identifier scope: (_) @receiver name: (type_identifier) @name) @reference.type
(qualified_identifier scope: (_) @receiver name: (template_type name: (type_identifier) @name)) @reference.type
(type_identifier) @name @reference.type
