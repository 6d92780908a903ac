// Package scmmatch runs tree-sitter queries over flattened trees: the
// patterns package scmquery reads from a query's source, indexed by the
// symbols their root can be (Query), matched over the []tsnative.Node of
// a parse (Matcher), so a query reads the parse cache's trees and needs
// no C cursor. It gives each match's pattern and captures (node
// indexes); the predicates on their text, rows and columns, and the
// files and trees are astgrep's.
package scmmatch
