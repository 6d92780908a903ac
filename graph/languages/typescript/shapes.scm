; edit_symbol's shapes beyond javascript's: an interface's body.
(interface_declaration body: (_) @body) @def
