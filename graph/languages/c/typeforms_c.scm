; C only (C++'s grammar has no such node): a macro standing for a type,
; LIST_HEAD(x), names no members.
(macro_type_specifier) @type.other
