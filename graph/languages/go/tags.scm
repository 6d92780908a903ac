; Go: what the code graph extracts (see package graph for the captures).

(package_clause (package_identifier) @name) @package

(import_spec
  name: (_)? @import.alias
  path: (interpreted_string_literal) @import.module) @import

; A function's declared result type (@type) lets x := NewX() know x's type.
(function_declaration name: (identifier) @name result: (_)? @type) @definition.function

; A method's container is its receiver's type; @self is the receiver's
; name, so calls on it resolve inside the type.
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      name: (identifier)? @self
      type: [
        (type_identifier) @container
        (pointer_type (type_identifier) @container)
        (generic_type type: (type_identifier) @container)
        (pointer_type (generic_type type: (type_identifier) @container))
      ]))
  name: (field_identifier) @name
  result: (_)? @type) @definition.method

(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name) @definition.type
(type_alias name: (type_identifier) @name) @definition.type

(interface_type (method_elem name: (field_identifier) @name result: (_)? @type) @definition.method)

; Fields with declared types (s.conn.Write() through conn *Conn), and
; embedded types, whose methods and fields are the struct's.
(field_declaration name: (field_identifier) @name type: (_) @type) @field
(field_declaration !name type: (_) @type) @field
; An interface's embedded interface: its methods are the interface's.
; (Only a declared interface's: an interface literal in a struct's field
; gives the struct nothing.)
(type_spec type: (interface_type (type_elem . [(type_identifier) (qualified_type)] @type .) @field))

(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))
(source_file (var_declaration (var_spec name: (identifier) @name type: (_) @type) @definition.variable))
; var Stdout = NewFile(...): the declared result of the callee; var d = T{}.
(source_file (var_declaration (var_spec
  . name: (identifier) @name .
  value: (expression_list . (call_expression function: [(identifier) (selector_expression)] @type.call) .)
  (#not-any-of? @type.call "new" "make")) @definition.variable))
(source_file (var_declaration (var_spec
  . name: (identifier) @name .
  value: (expression_list . [
    (composite_literal type: (_) @type.new)
    (unary_expression operator: "&" operand: (composite_literal type: (_) @type.new))
  ] .)) @definition.variable))
(source_file (var_declaration (var_spec
  . name: (identifier) @name .
  value: (expression_list . (call_expression function: (identifier) @_new arguments: (argument_list . (_) @type.new .)) .)
  (#eq? @_new "new")) @definition.variable))
; var testHook = context.WithTimeout, var std = defaultLogger: what it is
; set to (a function a call of it calls, or a value's type).
(source_file (var_declaration (var_spec
  . name: (identifier) @name .
  value: (expression_list . [(identifier) (selector_expression)] @type.expr .)) @definition.variable))
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.variable))
; The same in a group: var ( a T; b = NewB() ).
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) @name type: (_) @type) @definition.variable)))
(source_file (var_declaration (var_spec_list (var_spec
  . name: (identifier) @name .
  value: (expression_list . (call_expression function: [(identifier) (selector_expression)] @type.call) .)
  (#not-any-of? @type.call "new" "make")) @definition.variable)))
(source_file (var_declaration (var_spec_list (var_spec
  . name: (identifier) @name .
  value: (expression_list . [
    (composite_literal type: (_) @type.new)
    (unary_expression operator: "&" operand: (composite_literal type: (_) @type.new))
  ] .)) @definition.variable)))
(source_file (var_declaration (var_spec_list (var_spec
  . name: (identifier) @name .
  value: (expression_list . (call_expression function: (identifier) @_new arguments: (argument_list . (_) @type.new .)) .)
  (#eq? @_new "new")) @definition.variable)))
(source_file (var_declaration (var_spec_list (var_spec
  . name: (identifier) @name .
  value: (expression_list . [(identifier) (selector_expression)] @type.expr .)) @definition.variable)))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) @name) @definition.variable)))

; Calls: f(), pkg.F(), x.M(), F[T]() (read as a conversion by the grammar).
(call_expression function: (identifier) @name) @reference.call
; A call of a function literal where it is written (func(){…}()) or of
; what a call returns (f()(x)): named by the keyword and by the
; arguments' parenthesis, which the resolver reads (function_literals).
(call_expression function: [(func_literal "func" @name) (parenthesized_expression (func_literal "func" @name))]) @reference.call
(call_expression function: [(call_expression) (parenthesized_expression (call_expression))] arguments: (argument_list "(" @name)) @reference.call
; T{}.M(): the receiver is the type itself.
(call_expression
  function: (selector_expression
    operand: (composite_literal type: (type_identifier) @receiver)
    field: (field_identifier) @name)) @reference.call
(call_expression
  function: (selector_expression operand: (_) @receiver field: (field_identifier) @name)) @reference.call
(call_expression function: (index_expression operand: (identifier) @name)) @reference.call
(call_expression
  function: (index_expression
    operand: (selector_expression operand: (_) @receiver field: (field_identifier) @name))) @reference.call
(type_conversion_expression type: (generic_type type: (type_identifier) @name)) @reference.call

; A function passed or stored as a value may be called from anywhere.
; Passed to a call, its place among the call's @arguments is kept: a
; call of that parameter in the callee runs it.
(call_expression arguments: (argument_list (identifier) @name) @arguments) @reference.value
(call_expression arguments: (argument_list (selector_expression operand: (identifier) @receiver field: (field_identifier) @name)) @arguments) @reference.value
(argument_list (identifier) @name) @reference.value
(argument_list (selector_expression operand: (identifier) @receiver field: (field_identifier) @name)) @reference.value
(keyed_element (literal_element (identifier) @name) .) @reference.value

; Type uses.
(qualified_type package: (package_identifier) @receiver name: (type_identifier) @name) @reference.type
(type_identifier) @name @reference.type

; Declared types of locals, before the untyped patterns below (one
; record per name): a parameter's type, var x T, x := T{} / &T{} /
; new(T), x := NewX() (and x, err := NewX()) by NewX's declared result, a
; range's element, a type switch case naming one type.
(parameter_declaration name: (identifier) @name type: (_) @type) @local.param
; A function's parameters by their place in its @parameters (a
; receiver's list is not one).
(function_declaration parameters: (parameter_list (parameter_declaration name: (identifier) @name) @local) @parameters)
(method_declaration parameters: (parameter_list (parameter_declaration name: (identifier) @name) @local) @parameters)
(func_literal parameters: (parameter_list (parameter_declaration name: (identifier) @name) @local) @parameters)
(var_spec name: (identifier) @name type: (_) @type) @local
(var_spec
  . name: (identifier) @name .
  value: (expression_list . [
    (composite_literal type: (_) @type.new)
    (unary_expression operator: "&" operand: (composite_literal type: (_) @type.new))
    (call_expression function: [(identifier) (selector_expression)] @type.call)
  ])
  (#not-eq? @type.call "new")) @local
(var_spec
  . name: (identifier) @name .
  value: (expression_list . (call_expression function: (identifier) @_new arguments: (argument_list . (_) @type.new .)) .)
  (#eq? @_new "new")) @local
(short_var_declaration
  left: (expression_list . (identifier) @name)
  right: (expression_list . [
    (composite_literal type: (_) @type.new)
    (unary_expression operator: "&" operand: (composite_literal type: (_) @type.new))
  ])) @local
(short_var_declaration
  left: (expression_list . (identifier) @name)
  right: (expression_list . (call_expression
    function: (identifier) @_new
    arguments: (argument_list . (_) @type.new .))
  (#eq? @_new "new"))) @local
; hh := make([]*Hash, 7): the type make is given.
(short_var_declaration
  left: (expression_list . (identifier) @name)
  right: (expression_list . (call_expression
    function: (identifier) @_make
    arguments: (argument_list . (_) @type))
  (#eq? @_make "make"))) @local
(short_var_declaration
  left: (expression_list . (identifier) @name)
  right: (expression_list . (call_expression function: [(identifier) (selector_expression)] @type.call))
  (#not-eq? @type.call "new")) @local
; f := <-ch, f, ok := <-ch: an element of the channel.
(short_var_declaration
  left: (expression_list . (identifier) @name)
  right: (expression_list . (unary_expression operator: "<-" operand: [(identifier) (selector_expression)] @type.elem) .)) @local
; ctx, span := trace.StartSpan(...): a later name holds a later result.
(short_var_declaration
  left: (expression_list . (_) . (identifier) @name)
  right: (expression_list . (call_expression function: [(identifier) (selector_expression)] @type.call.2) .)) @local
(short_var_declaration
  left: (expression_list . (_) . (_) . (identifier) @name)
  right: (expression_list . (call_expression function: [(identifier) (selector_expression)] @type.call.3) .)) @local
(var_spec
  . name: (_) . name: (identifier) @name
  value: (expression_list . (call_expression function: [(identifier) (selector_expression)] @type.call.2) .)) @local
; setup := func() *DB {…}: a call of setup returns *DB.
(short_var_declaration
  left: (expression_list . (identifier) @name .)
  right: (expression_list . (func_literal result: (_) @type.result) .)) @local
(var_spec
  . name: (identifier) @name .
  value: (expression_list . (func_literal result: (_) @type.result) .)) @local
; written, b := 0, new(strings.Builder): a later name paired with the
; value in its place (second to fourth).
(short_var_declaration
  left: (expression_list . (_) . (identifier) @name)
  right: (expression_list . (_) . [
    (composite_literal type: (_) @type.new)
    (unary_expression operator: "&" operand: (composite_literal type: (_) @type.new))
    (call_expression function: [(identifier) (selector_expression)] @type.call)
    (unary_expression operator: ["&" "*"] operand: [(identifier) (selector_expression)] @type.expr)
    [(identifier) (selector_expression) (index_expression)] @type.expr
  ])
  (#not-eq? @type.call "new")) @local
(short_var_declaration
  left: (expression_list . (_) . (identifier) @name)
  right: (expression_list . (_) . (call_expression
    function: (identifier) @_new
    arguments: (argument_list . (_) @type.new .))
  (#eq? @_new "new"))) @local
(short_var_declaration
  left: (expression_list . (_) . (_) . (identifier) @name)
  right: (expression_list . (_) . (_) . [
    (composite_literal type: (_) @type.new)
    (unary_expression operator: "&" operand: (composite_literal type: (_) @type.new))
    (call_expression function: [(identifier) (selector_expression)] @type.call)
    (unary_expression operator: ["&" "*"] operand: [(identifier) (selector_expression)] @type.expr)
    [(identifier) (selector_expression) (index_expression)] @type.expr
  ])
  (#not-eq? @type.call "new")) @local
(short_var_declaration
  left: (expression_list . (_) . (_) . (identifier) @name)
  right: (expression_list . (_) . (_) . (call_expression
    function: (identifier) @_new
    arguments: (argument_list . (_) @type.new .))
  (#eq? @_new "new"))) @local
(short_var_declaration
  left: (expression_list . (_) . (_) . (_) . (identifier) @name)
  right: (expression_list . (_) . (_) . (_) . [
    (composite_literal type: (_) @type.new)
    (unary_expression operator: "&" operand: (composite_literal type: (_) @type.new))
    (call_expression function: [(identifier) (selector_expression)] @type.call)
    (unary_expression operator: ["&" "*"] operand: [(identifier) (selector_expression)] @type.expr)
    [(identifier) (selector_expression) (index_expression)] @type.expr
  ])
  (#not-eq? @type.call "new")) @local
(short_var_declaration
  left: (expression_list . (_) . (_) . (_) . (identifier) @name)
  right: (expression_list . (_) . (_) . (_) . (call_expression
    function: (identifier) @_new
    arguments: (argument_list . (_) @type.new .))
  (#eq? @_new "new"))) @local
(short_var_declaration
  left: (expression_list . (identifier) @name)
  right: (expression_list . [(identifier) (selector_expression) (index_expression)] @type.expr)) @local
; p := &enc.p, buf := *s.buf: the operand's type names the same methods.
(short_var_declaration
  left: (expression_list . (identifier) @name)
  right: (expression_list . (unary_expression operator: ["&" "*"] operand: [(identifier) (selector_expression)] @type.expr))) @local
(short_var_declaration
  left: (expression_list . (identifier) @name)
  right: (expression_list . (type_assertion_expression type: (_) @type))) @local
(range_clause
  left: (expression_list (identifier) (identifier) @name)
  right: [(identifier) (selector_expression) (call_expression) (composite_literal)] @type.elem) @local
; for k := range m: a map's key, a channel's element.
(range_clause
  left: (expression_list . (identifier) @name .)
  right: [(identifier) (selector_expression) (call_expression)] @type.key) @local
(type_switch_statement
  alias: (expression_list (identifier) @name)
  (type_case type: (_) @type) @scope) @local

; Type parameters: a local of the generic function (of a method, by its
; receiver's type arguments) or a field of the generic type, so a value of
; type T is not the package's T; typed by the constraint.
(function_declaration type_parameters: (type_parameter_list
  (type_parameter_declaration name: (identifier) @name type: (type_constraint) @type.param) @local))
; (A method's T is the type's: its "constraint" here is the type, Box,
; which no call is typed by.)
(method_declaration receiver: (parameter_list (parameter_declaration type: [
  (generic_type type: (_) @type.param type_arguments: (type_arguments (type_elem (type_identifier) @name)))
  (pointer_type (generic_type type: (_) @type.param type_arguments: (type_arguments (type_elem (type_identifier) @name))))
  ]) @local))
(type_spec type_parameters: (type_parameter_list
  (type_parameter_declaration name: (identifier) @name type: (type_constraint) @type.param)) @field)

; Locals: a parameter or variable of a function hides a package or type of
; the same name (sha1 := sha1.New(); sha1.Sum(nil) calls a method of a
; value, not the package's Sum).
(parameter_declaration name: (identifier) @name) @local
(variadic_parameter_declaration name: (identifier) @name) @local
(short_var_declaration left: (expression_list (identifier) @name)) @local
(var_spec name: (identifier) @name) @local
(range_clause left: (expression_list (identifier) @name)) @local
(type_switch_statement alias: (expression_list (identifier) @name) @local)
(receive_statement left: (expression_list (identifier) @name)) @local
(const_spec name: (identifier) @name) @local

; More places a function is used as a value: assigned, returned, stored in
; a literal, or a method value (x.m without a call).
(var_spec value: (expression_list (identifier) @name)) @reference.value
(assignment_statement right: (expression_list (identifier) @name)) @reference.value
(short_var_declaration right: (expression_list (identifier) @name)) @reference.value
(return_statement (expression_list (identifier) @name)) @reference.value
(literal_element (identifier) @name) @reference.value
(var_spec value: (expression_list (selector_expression operand: (identifier) @receiver field: (field_identifier) @name))) @reference.value
(assignment_statement right: (expression_list (selector_expression operand: (identifier) @receiver field: (field_identifier) @name))) @reference.value
(short_var_declaration right: (expression_list (selector_expression operand: (identifier) @receiver field: (field_identifier) @name))) @reference.value
(return_statement (expression_list (selector_expression operand: (identifier) @receiver field: (field_identifier) @name))) @reference.value
(literal_element (selector_expression operand: (identifier) @receiver field: (field_identifier) @name)) @reference.value
; A method expression as a value ((*T).m, (*pkg.T).m; T.m is above): in a
; table of commands, an argument, an assignment, a return.
(argument_list (selector_expression
  operand: (parenthesized_expression (unary_expression operator: "*" operand: [(identifier) (selector_expression)] @receiver))
  field: (field_identifier) @name)) @reference.value
(literal_element (selector_expression
  operand: (parenthesized_expression (unary_expression operator: "*" operand: [(identifier) (selector_expression)] @receiver))
  field: (field_identifier) @name)) @reference.value
(expression_list (selector_expression
  operand: (parenthesized_expression (unary_expression operator: "*" operand: [(identifier) (selector_expression)] @receiver))
  field: (field_identifier) @name)) @reference.value

; Scopes: a local is visible to the end of the block or closure it is
; declared in (a closure's parameters only inside it).
(block) @local.scope
(func_literal) @local.scope
(if_statement) @local.scope
(for_statement) @local.scope
(expression_switch_statement) @local.scope
(type_switch_statement) @local.scope
; Each case of a switch or select is a block of its own.
(expression_case) @local.scope
(default_case) @local.scope
(type_case) @local.scope
(communication_case) @local.scope
