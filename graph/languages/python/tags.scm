; Python: what the code graph extracts (see package graph for the captures).

; Imports. `import a.b` binds a.b; `import a.b as c` binds c.
(import_statement name: (dotted_name) @import.module) @import
(import_statement
  name: (aliased_import name: (dotted_name) @import.module alias: (identifier) @import.alias)) @import

; `from m import f` and `from .m import f as g`; the module text keeps
; its leading dots, which mark it relative.
(import_from_statement
  module_name: [(dotted_name) (relative_import)] @import.module
  name: (dotted_name) @import.name) @import
; from m import * makes every name of m visible.
(import_from_statement
  module_name: [(dotted_name) (relative_import)] @import.module
  (wildcard_import) @import.alias) @import
(import_from_statement
  module_name: [(dotted_name) (relative_import)] @import.module
  name: (aliased_import name: (dotted_name) @import.name alias: (identifier) @import.alias)) @import

; Definitions; a def inside a class becomes its method.
(class_definition name: (identifier) @name) @definition.class
; @property (and cached_property): a getter, which runs where it is read.
(decorated_definition
  (decorator [(identifier) @_d (attribute attribute: (identifier) @_d)])
  definition: (function_definition name: (identifier) @name) @definition.getter
  (#any-of? @_d "property" "cached_property"))
(function_definition name: (identifier) @name) @definition.function

; Module-level assignments: ALL_CAPS names are constants, others variables.
(module
  (expression_statement
    (assignment left: (identifier) @name) @definition.constant)
  (#match? @name "^[A-Z][A-Z0-9_]*$"))
(module (expression_statement (assignment left: (identifier) @name type: (type) @type) @definition.variable))
; handler = default_handler, Alias = models.Store: what it is set to (a
; function or class a call of it calls, or a value's type).
(module (expression_statement (assignment left: (identifier) @name right: [(identifier) (attribute)] @type.expr) @definition.variable))
(module (expression_statement (assignment left: (identifier) @name) @definition.variable))

; Base classes are type uses, listed before the value pattern below
; (both see an identifier in an argument_list).
(class_definition
  superclasses: (argument_list (identifier) @name)) @reference.type
(class_definition
  superclasses: (argument_list (attribute object: (_) @receiver attribute: (identifier) @name))) @reference.type

; Calls: f(), Cls() (a constructor is a call to the class), obj.m(),
; mod.f(), a.b.f().
(call function: (identifier) @name) @reference.call
(call function: (attribute object: (_) @receiver attribute: (identifier) @name)) @reference.call

; A function passed as an argument, positionally or by keyword.
; A call of a lambda where it is written ((lambda: …)()) or of what a
; call returns (f()(x)): named by the keyword and by the arguments'
; parenthesis (function_literals).
(call function: (parenthesized_expression (lambda "lambda" @name))) @reference.call
(call function: [(call) (parenthesized_expression (call))] arguments: (argument_list "(" @name)) @reference.call
(call arguments: (argument_list (identifier) @name) @arguments) @reference.value
(call arguments: (argument_list (attribute object: (identifier) @receiver attribute: (identifier) @name)) @arguments) @reference.value
(argument_list (identifier) @name) @reference.value
(argument_list (attribute object: (identifier) @receiver attribute: (identifier) @name)) @reference.value
(call arguments: (argument_list (keyword_argument name: (identifier) @argument.name value: (identifier) @name)) @arguments) @reference.value
(call arguments: (argument_list (keyword_argument name: (identifier) @argument.name value: (attribute object: (identifier) @receiver attribute: (identifier) @name))) @arguments) @reference.value
(keyword_argument value: (identifier) @name) @reference.value
(keyword_argument value: (attribute object: (_) @receiver attribute: (identifier) @name)) @reference.value
; Stored or returned: handler = obj.method, return f.
(assignment right: (identifier) @name) @reference.value
(assignment right: (attribute object: (_) @receiver attribute: (identifier) @name)) @reference.value
(return_statement (identifier) @name) @reference.value
(return_statement (attribute object: (_) @receiver attribute: (identifier) @name)) @reference.value
(pair value: (identifier) @name) @reference.value
(pair value: (attribute object: (_) @receiver attribute: (identifier) @name)) @reference.value

; Annotations.
(type (identifier) @name) @reference.type
(type (attribute object: (_) @receiver attribute: (identifier) @name)) @reference.type
(type (generic_type (identifier) @name)) @reference.type
(type (subscript value: (identifier) @name)) @reference.type

; Locals: a parameter or variable of a function hides a module, class or
; function of the same name (def f(os): os.getcwd() calls a method of the
; value).
(parameters (identifier) @name) @local @parameters
(parameters [(default_parameter name: (identifier) @name) (typed_parameter (identifier) @name) (typed_default_parameter name: (identifier) @name)] @local) @parameters
(default_parameter name: (identifier) @name) @local
(typed_parameter (identifier) @name) @local
(typed_default_parameter name: (identifier) @name) @local
(list_splat_pattern (identifier) @name) @local
(dictionary_splat_pattern (identifier) @name) @local
(assignment left: (identifier) @name) @local
(for_statement left: (identifier) @name) @local
(pattern_list (identifier) @name) @local
(as_pattern_target (identifier) @name) @local

; A lambda's parameters are its own.
(lambda) @local.scope

; Attribute reads, last so a call or a value use of the same name wins: a
; read that leads to no getter is dropped from answers.
(attribute object: (_) @receiver attribute: (identifier) @name) @reference.read

; Declared types (see package graph): annotated parameters and variables,
; x = Foo() (a class constructs itself; a function by its return
; annotation), for x in xs over a typed list, an isinstance branch, class
; annotations and self.x = ... in __init__ as fields, bases.
(typed_parameter (identifier) @name type: (type) @type) @local.param
(typed_default_parameter name: (identifier) @name type: (type) @type) @local.param
(assignment left: (identifier) @name type: (type) @type) @local
(assignment left: (identifier) @name right: (call function: [(identifier) (attribute)] @type.call)) @local
(assignment left: (identifier) @name right: [(identifier) (attribute)] @type.expr) @local
; d = {}, s = "": a literal of a builtin type (language.json literal_types).
(assignment left: (identifier) @name right: [(string) (concatenated_string) (dictionary) (list) (dictionary_comprehension) (list_comprehension)] @type.expr) @local
(for_statement left: (identifier) @name right: [(identifier) (attribute)] @type.elem) @local
(if_statement
  condition: (call
    function: (identifier) @_isinstance
    arguments: (argument_list . (identifier) @name . [(identifier) (attribute)] @type .))
  consequence: (block) @scope
  (#eq? @_isinstance "isinstance")) @local
(function_definition name: (identifier) @name return_type: (type) @type) @definition.function
; A function's result without an annotation: each return statement binds
; "return" (typed when it returns a construction, a name or an attribute),
; each yield "yield"; the returns must all agree, and a generator has none.
(return_statement "return" @name) @local
(return_statement "return" @name (call function: [(identifier) (attribute)] @type.call)) @local
(return_statement "return" @name [(identifier) (attribute)] @type.expr) @local
(yield "yield" @name) @local
(class_definition body: (block (expression_statement (assignment left: (identifier) @name type: (type) @type)))) @field
(function_definition
  name: (identifier) @_init
  body: (block (expression_statement (assignment
    left: (attribute object: (identifier) @_self attribute: (identifier) @name)
    type: (type) @type)))
  (#eq? @_init "__init__")
  (#eq? @_self "self")) @field
(function_definition
  name: (identifier) @_init
  body: (block (expression_statement (assignment
    left: (attribute object: (identifier) @_self attribute: (identifier) @name)
    right: [
      (call function: [(identifier) (attribute)] @type.call)
      [(identifier) (string) (concatenated_string) (dictionary) (list) (dictionary_comprehension) (list_comprehension)] @type.expr
    ])))
  (#eq? @_init "__init__")
  (#eq? @_self "self")) @field
(class_definition superclasses: (argument_list [(identifier) (attribute)] @type)) @field
; A module's own variables: every binding of a name at the module's top
; level (in if and try blocks too: the @local patterns above, read as the
; module's outside functions, and these) and every global statement naming
; it; they must agree for _inst = Random(); _inst.random() to type _inst.
(augmented_assignment left: (identifier) @name) @field.module
(tuple_pattern (identifier) @name) @field.module
(named_expression name: (identifier) @name) @field.module
(global_statement (identifier) @name) @field.global
; self.x = ... in any method binds the field too: typed (a construction, a
; call, a name) or not (anything but None, which adds no methods); the
; bindings must agree for self.x.m() to be typed by them.
(assignment
  left: (attribute object: (identifier) @_self attribute: (identifier) @name)
  right: (_) @_r
  (#eq? @_self "self")
  (#not-eq? @_r "None")) @field.attr
(assignment
  left: (attribute object: (identifier) @_self attribute: (identifier) @name)
  right: (call function: [(identifier) (attribute)] @type.call)
  (#eq? @_self "self")) @field.attr
(assignment
  left: (attribute object: (identifier) @_self attribute: (identifier) @name)
  right: [(identifier) (string) (concatenated_string) (dictionary) (list) (dictionary_comprehension) (list_comprehension)] @type.expr
  (#eq? @_self "self")) @field.attr
(augmented_assignment
  left: (attribute object: (identifier) @_self attribute: (identifier) @name)
  (#eq? @_self "self")) @field.attr
(pattern_list (attribute object: (identifier) @_self attribute: (identifier) @name) (#eq? @_self "self")) @field.attr
(tuple_pattern (attribute object: (identifier) @_self attribute: (identifier) @name) (#eq? @_self "self")) @field.attr
