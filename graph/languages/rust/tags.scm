; Rust: what the code graph extracts (see package graph for the captures).

; `mod geo;` brings the file geo.rs (or geo/mod.rs) in as module geo;
; the local name is given, as it is the whole path.
(mod_item name: (identifier) @import.module @import.alias !body) @import

; use a::b::c; binds c from module a::b (c may itself be a module, which
; the engine tries too). Paths into std, core and alloc bind the whole
; path instead, so Type::f() through them is external, not a guess.
(use_declaration
  argument: (scoped_identifier path: (_) @import.module name: (identifier) @import.name)
  (#not-match? @import.module "^(std|core|alloc)(::|$)")) @import
(use_declaration
  argument: (scoped_identifier path: (_) @_std name: (identifier) @import.alias) @import.module
  (#match? @_std "^(std|core|alloc)(::|$)")) @import
(use_declaration
  argument: (use_as_clause
    path: (scoped_identifier path: (_) @import.module name: (identifier) @import.name)
    alias: (identifier) @import.alias)) @import
(use_declaration argument: (identifier) @import.module @import.alias) @import
; use a::{b, c as d, self}.
(use_declaration
  argument: (scoped_use_list path: (_) @import.module list: (use_list (identifier) @import.name))
  (#not-match? @import.module "^(std|core|alloc)(::|$)")) @import
(use_declaration
  argument: (scoped_use_list path: (_) @import.module list: (use_list (identifier) @import.alias))
  (#match? @import.module "^(std|core|alloc)(::|$)")) @import
(use_declaration
  argument: (scoped_use_list
    path: (_) @import.module
    list: (use_list (use_as_clause path: (identifier) @import.name alias: (identifier) @import.alias)))) @import
(use_declaration
  argument: (scoped_use_list path: (_) @import.module list: (use_list (self)))) @import

; Functions in an impl block are methods of the implementing type (the
; `for` type of a trait impl). Listed before plain functions.
(impl_item
  type: [
    (type_identifier) @container
    (generic_type type: (type_identifier) @container)
    (scoped_type_identifier name: (type_identifier) @container)
    (generic_type type: (scoped_type_identifier name: (type_identifier) @container))
  ]
  body: (declaration_list (function_item name: (identifier) @name) @definition.method))
(impl_item
  type: [
    (type_identifier) @container
    (generic_type type: (type_identifier) @container)
  ]
  body: (declaration_list (const_item name: (identifier) @name) @definition.constant))

(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.method
(struct_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(union_item name: (type_identifier) @name) @definition.union
(trait_item name: (type_identifier) @name) @definition.trait
(type_item name: (type_identifier) @name) @definition.type
(mod_item name: (identifier) @name body: (_)) @definition.module
(macro_definition name: (identifier) @name) @definition.macro
(source_file (const_item name: (identifier) @name) @definition.constant)
(source_file (static_item name: (identifier) @name) @definition.variable)

; Calls on a builtin type (Vec::new(), String::from()) are calls into it,
; not to a same-named function of the project.
(call_expression
  function: (scoped_identifier path: (identifier) @name name: (identifier))
  (#any-of? @name "Vec" "String" "Box" "Option" "Result" "Rc" "Arc" "RefCell" "Cell" "Some" "Ok" "Err")) @reference.call
(call_expression
  function: (generic_function
    function: (scoped_identifier path: (identifier) @name name: (identifier)))
  (#any-of? @name "Vec" "String" "Box" "Option" "Result" "Rc" "Arc" "RefCell" "Cell")) @reference.call

; Calls: f(), obj.m(), Type::f(), module::f(), f::<T>(), m!().
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression value: (_) @receiver field: (field_identifier) @name)) @reference.call
(call_expression
  function: (scoped_identifier path: (_) @receiver name: (identifier) @name)
  (#not-any-of? @receiver "Vec" "String" "Box" "Option" "Result" "Rc" "Arc" "RefCell" "Cell" "Some" "Ok" "Err")) @reference.call
(call_expression function: (generic_function function: (identifier) @name)) @reference.call
(call_expression
  function: (generic_function function: (field_expression value: (_) @receiver field: (field_identifier) @name))) @reference.call
(call_expression
  function: (generic_function function: (scoped_identifier path: (_) @receiver name: (identifier) @name)
  (#not-any-of? @receiver "Vec" "String" "Box" "Option" "Result" "Rc" "Arc" "RefCell" "Cell"))) @reference.call
(macro_invocation macro: (identifier) @name) @reference.call
(macro_invocation macro: (scoped_identifier path: (_) @receiver name: (identifier) @name)) @reference.call

; A struct literal builds the struct: a call to it, as a constructor.
(struct_expression name: (type_identifier) @name) @reference.call
(struct_expression name: (scoped_type_identifier path: (_) @receiver name: (type_identifier) @name)) @reference.call

; A function passed as a value: f, Type::f, module::f. Passed to a call,
; its place among the call's @arguments is kept: a call of that parameter
; in the callee runs it.
(call_expression arguments: (arguments (identifier) @name) @arguments) @reference.value
(call_expression arguments: (arguments (scoped_identifier path: (_) @receiver name: (identifier) @name)) @arguments) @reference.value
(arguments (identifier) @name) @reference.value
(arguments (scoped_identifier path: (_) @receiver name: (identifier) @name)) @reference.value

; Type uses.
(scoped_type_identifier path: (_) @receiver name: (type_identifier) @name) @reference.type
(type_identifier) @name @reference.type
