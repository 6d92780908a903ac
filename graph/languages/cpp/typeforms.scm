; C++'s additions to C's typeforms.scm (language.json type_forms lists
; both): qualified names, templates, classes, this.

; Types. ns::T and a::b::T are one path; std::unique_ptr<T>: a path whose
; last segment is a generic (type_wrappers say which are T).
(namespace_identifier) @type.name
(qualified_identifier scope: (_) @type.path.seg name: (_) @type.path.seg) @type.path
; ::T, written from the global namespace; A::template rebind<T>.
(qualified_identifier !scope name: (_) @type.same.elem) @type.same
(dependent_name (_) @type.same.elem) @type.same
(template_type name: (_) @type.generic.base) @type.generic
(template_type arguments: (template_argument_list (type_descriptor) @type.generic.arg)) @type.generic
(class_specifier name: (_) @type.same.elem) @type.same
(dependent_type (_) @type.same.elem) @type.same
; auto is a name nothing defines; decltype(x) and a class written in
; place name no members read.
((placeholder_type_specifier) @type.name (#eq? @type.name "auto"))
[(placeholder_type_specifier) (decltype) (class_specifier)] @type.other

; Expressions. static_cast<T *>(x) and its kin are casts; f<T>() calls f.
(this) @expr.name
(namespace_identifier) @expr.name
(call_expression
  function: (template_function name: (identifier) @_cast arguments: (template_argument_list . (type_descriptor) @expr.assert.type .))
  arguments: (argument_list . (_) @expr.assert.object .)
  (#any-of? @_cast "static_cast" "dynamic_cast" "reinterpret_cast" "const_cast")) @expr.assert
(qualified_identifier scope: (_) @expr.path.object name: (_) @expr.path.name) @expr.path
(qualified_identifier !scope name: (_) @expr.same.object) @expr.same
(dependent_name (_) @expr.same.object) @expr.same
(template_function name: (_) @expr.same.object) @expr.same
(template_type name: (_) @expr.same.object) @expr.same
