; Java: what the code graph extracts (see package graph for the captures).

(package_declaration [(scoped_identifier) (identifier)] @name) @package

; import a.b.C; import static a.b.C.m; bind C (or m) from module a.b
; (or a.b.C). import a.b.*; makes every name of a.b visible (@import.alias
; "*").
(import_declaration (scoped_identifier scope: (_) @import.module name: (identifier) @import.name) .) @import
(import_declaration (scoped_identifier) @import.module (asterisk) @import.alias) @import

; Types; members nested in them get them as container.
(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.class
(annotation_type_declaration name: (identifier) @name) @definition.interface

(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.constructor
(compact_constructor_declaration name: (identifier) @name) @definition.constructor

; static final fields and interface fields are constants.
(field_declaration
  (modifiers) @_m
  declarator: (variable_declarator name: (identifier) @name)
  (#match? @_m "\\bstatic\\b")
  (#match? @_m "\\bfinal\\b")) @definition.constant
(constant_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.constant

; A call on a java.lang class (System.out.println, Math.max) is a call
; into it, not to a same-named method of the project.
(method_invocation
  object: [(identifier) @name (field_access object: (identifier) @name)]
  (#any-of? @name "System" "Math" "String" "Integer" "Long" "Double" "Boolean" "Character" "Objects" "Thread")) @reference.call

; Calls: m(), obj.m(), Type.m(), this.m(), super.m().
(method_invocation
  object: (_) @receiver
  name: (identifier) @name
  (#not-match? @receiver "^(System|Math|String|Integer|Long|Double|Boolean|Character|Objects|Thread)([.]|$)")) @reference.call
(method_invocation !object name: (identifier) @name) @reference.call

; new C(...) is a call to the class.
(object_creation_expression type: (type_identifier) @name) @reference.call
(object_creation_expression type: (generic_type (type_identifier) @name)) @reference.call
(object_creation_expression type: (scoped_type_identifier (_) @receiver . (type_identifier) @name .)) @reference.call

; A method passed as a value: Type::m, obj::m, this::m.
(method_reference . (_) @receiver (identifier) @name .) @reference.value

; Type uses.
(scoped_type_identifier . (_) @receiver (type_identifier) @name .) @reference.type
(type_identifier) @name @reference.type
