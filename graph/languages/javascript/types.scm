; Declared types JavaScript and TypeScript share (see package graph):
; x = new X(), x = f() by f's declared result, x = y.z, for (x of xs),
; an instanceof branch, this.x = new X() in a constructor.
(variable_declarator
  name: (identifier) @name
  value: (new_expression constructor: [(identifier) (member_expression)] @type.new)) @local
(variable_declarator
  name: (identifier) @name
  value: (call_expression function: [(identifier) (member_expression)] @type.call)
  (#not-eq? @type.call "require")) @local
; const self = this: the alias is the receiver's.
(variable_declarator name: (identifier) @name value: [(identifier) (member_expression) (this)] @type.expr) @local
(for_in_statement left: (identifier) @name "of" right: [(identifier) (member_expression)] @type.elem) @local
; xs.forEach((x) => …), xs.map(function (x) {…}): the callback's first
; parameter is an element of the receiver (an element_types collection),
; also of a call's result (this.ancestors().forEach((cmd) => …)).
; (TypeScript's typed parameters: its own types.scm.)
(call_expression
  function: (member_expression object: [(identifier) (member_expression) (call_expression)] @type.elem property: (property_identifier) @_m)
  arguments: (arguments . [
    (arrow_function parameter: (identifier) @name)
    (arrow_function parameters: (formal_parameters . (identifier) @name))
    (function_expression parameters: (formal_parameters . (identifier) @name))
  ] @local)
  (#any-of? @_m "forEach" "map" "filter" "find" "findIndex" "findLast" "findLastIndex" "some" "every" "flatMap"))
(if_statement
  condition: (parenthesized_expression
    (binary_expression left: (identifier) @name "instanceof" right: [(identifier) (member_expression)] @type))
  consequence: (statement_block) @scope) @local
(method_definition
  name: (property_identifier) @_c
  body: (statement_block (expression_statement (assignment_expression
    left: (member_expression object: (this) property: [(property_identifier) (private_property_identifier)] @name)
    right: (new_expression constructor: [(identifier) (member_expression)] @type.new))))
  (#eq? @_c "constructor")) @field
; this.x = x in a constructor: x's type.
(method_definition
  name: (property_identifier) @_c
  body: (statement_block (expression_statement (assignment_expression
    left: (member_expression object: (this) property: [(property_identifier) (private_property_identifier)] @name)
    right: (identifier) @type.expr)))
  (#eq? @_c "constructor")) @field
; /** @type {Option[]} */ this.options = [] in a constructor: the
; comment's type (language.json doc_type).
(method_definition
  name: (property_identifier) @_c
  body: (statement_block (comment) @type.doc . (expression_statement (assignment_expression
    left: (member_expression object: (this) property: [(property_identifier) (private_property_identifier)] @name))))
  (#eq? @_c "constructor")) @field
; const {gen, n = 1} = cxt: gen is cxt.gen.
(variable_declarator
  name: (object_pattern [(shorthand_property_identifier_pattern) @name
                         (object_assignment_pattern left: (shorthand_property_identifier_pattern) @name)])
  value: [(identifier) (member_expression)] @type.member) @local
