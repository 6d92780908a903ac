// Package rule is ast-grep's rule language as an agent sends it: a Spec
// holds the rule object (https://ast-grep.github.io/reference/rule.html),
// its constraints and its utility rules, decoded from JSON, and Parse
// turns it into a Parsed tree or an *Error naming the place in the rule
// (like rule.all[1].inside) and what to do.
//
// The language has atomic keys (pattern, kind, regex), relational keys
// (inside, has, precedes, follows, each a rule with stopBy and, for inside
// and has, field) and composite keys (all, any, not, matches). A node
// matches a rule object when it matches every key present, tried in
// ast-grep's order: atomic, then composite, then relational, so
// metavariables are bound the same way. Metavariables are shared by the
// whole rule: a $A bound by one pattern must capture the same text
// wherever else $A appears.
//
// Parse checks what needs no language: known keys with the right types
// (a near key suggested for a typo), no empty rule object, regular
// expressions that compile, constraints keyed by metavariable names, every
// matches naming a utility rule and no cycle through them, and the limits
// on depth, size and size written out in full (MaxDepth, MaxNodes,
// MaxExpanded). It compiles and matches nothing: package astgrep compiles
// a Parsed tree per language (patterns, kinds, fields) and runs it.
package rule
