; Calls: f(), obj.m(), a.b.m(); new C() is a call to the class. A method
; of a global object (console.log, Math.max) resolves as a builtin, by the
; receiver's name in language.json.
(call_expression function: (identifier) @name) @reference.call
(call_expression
  function: (member_expression object: (_) @receiver property: [(property_identifier) (private_property_identifier)] @name)) @reference.call
(new_expression constructor: (identifier) @name) @reference.call
(new_expression
  constructor: (member_expression object: (_) @receiver property: (property_identifier) @name)) @reference.call

; A function passed as an argument: f, obj.f, this.f (to new C(f) too: a
; constructor may store it).
(call_expression arguments: (arguments (identifier) @name) @arguments) @reference.value
(new_expression arguments: (arguments (identifier) @name) @arguments) @reference.value
(arguments (identifier) @name) @reference.value
(call_expression arguments: (arguments
  (member_expression object: [(identifier) (this)] @receiver property: (property_identifier) @name)) @arguments) @reference.value
(arguments
  (member_expression object: [(identifier) (this)] @receiver property: (property_identifier) @name)) @reference.value
; A function held by a variable (const h = g; h = obj.m): a call of the
; variable is a call of it when it is bound once.
(variable_declarator value: (identifier) @name) @reference.value
(variable_declarator
  value: (member_expression object: [(identifier) (this)] @receiver property: (property_identifier) @name)) @reference.value
(assignment_expression right: (identifier) @name) @reference.value
(assignment_expression
  right: (member_expression object: [(identifier) (this)] @receiver property: (property_identifier) @name)) @reference.value
; A function returned, stored in an object or an array (return f;
; {callee: f}; [f, g]): a value use. (return this.x stays a read: it
; may be a getter's.)
(return_statement (identifier) @name) @reference.value
(pair value: (identifier) @name) @reference.value
(array (identifier) @name) @reference.value
; A call of a function literal where it is written ((() => …)(),
; (function () {…})()) or of what a call returns (f()(x)): named by the
; keyword and by the arguments' parenthesis (function_literals).
(call_expression function: (parenthesized_expression [(arrow_function "=>" @name) (function_expression "function" @name)])) @reference.call
(call_expression function: [(call_expression) (parenthesized_expression (call_expression))] arguments: (arguments "(" @name)) @reference.call
; super(...) in a constructor runs the base class's constructor.
(call_expression function: (super) @name) @reference.call
