; C: what the code graph extracts (see package graph for the captures).

; #include "x.h" and <x.h>; the engine strips the quotes or brackets.
(preproc_include path: [(string_literal) (system_lib_string)] @import.module) @import

; Function definitions (prototypes are not: a header's declaration and
; the source's definition would be two targets for every call).
; LUA_API lua_Unsigned lua_rawlen(...): with an attribute macro before
; the return type, the grammar reads the type as the declarator and the
; name as an error after it; the name is the function's.
(function_definition
  declarator: (function_declarator declarator: (identifier) . (ERROR . (identifier) @name .))) @definition.function
(function_definition
  declarator: [
    (function_declarator declarator: (identifier) @name . parameters: (parameter_list))
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
  ]) @definition.function

; Tagged types with a body; a typedef's own definition is its name, so a
; struct defined inside it is not nested in the typedef.
(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.union
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
(type_definition declarator: (type_identifier) @name @definition.type)
(type_definition
  declarator: (pointer_declarator declarator: (type_identifier) @name @definition.type))
(type_definition
  declarator: (function_declarator declarator: (parenthesized_declarator (pointer_declarator declarator: (type_identifier) @name @definition.type))))

; Macros: object-like ones with a value are constants (an include guard
; has none), function-like ones macros.
(preproc_def name: (identifier) @name value: (_)) @definition.constant
(preproc_function_def name: (identifier) @name) @definition.macro

; File-level `const` objects are constants; other initialized ones variables.
(translation_unit
  (declaration
    (type_qualifier) @_const
    declarator: (init_declarator declarator: (identifier) @name)
    (#eq? @_const "const")) @definition.constant)
(translation_unit
  (declaration declarator: (init_declarator declarator: [(identifier) @name (pointer_declarator declarator: (identifier) @name)])) @definition.variable)

; Calls: f(), and through a function pointer field: obj.f(), obj->f().
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression argument: (_) @receiver field: (field_identifier) @name)) @reference.call

; A call through a function pointer dereferenced: (*cb)(x).
(call_expression function: (parenthesized_expression (pointer_expression operator: "*" argument: (identifier) @name))) @reference.call

; A function passed as an argument or stored: f(cb), {cb}, .fn = cb, p = cb.
; Passed to a call, its place among the call's @arguments is kept: a call
; of that parameter in the callee runs it.
(call_expression arguments: (argument_list (identifier) @name) @arguments) @reference.value
(call_expression arguments: (argument_list (pointer_expression "&" argument: (identifier) @name)) @arguments) @reference.value
(argument_list (identifier) @name) @reference.value
(initializer_list (identifier) @name) @reference.value
(initializer_pair value: (identifier) @name) @reference.value
(init_declarator value: (identifier) @name) @reference.value
(assignment_expression right: (identifier) @name) @reference.value
; &fn is the function as a value too.
(argument_list (pointer_expression "&" argument: (identifier) @name)) @reference.value
(initializer_list (pointer_expression "&" argument: (identifier) @name)) @reference.value
(initializer_pair value: (pointer_expression "&" argument: (identifier) @name)) @reference.value
(init_declarator value: (pointer_expression "&" argument: (identifier) @name)) @reference.value
(assignment_expression right: (pointer_expression "&" argument: (identifier) @name)) @reference.value

; Type uses: typedef names and struct/union/enum tags.
(type_identifier) @name @reference.type
