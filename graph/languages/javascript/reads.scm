; Property reads, for getters (JavaScript, TypeScript, TSX): obj.x runs
; x when x is a getter. Read last, so a call or a value use of the same
; name wins; a read that leads to no getter is dropped from answers.
(member_expression object: (_) @receiver property: (property_identifier) @name) @reference.read
