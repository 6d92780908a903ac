package tsnative

import (
	// The runtime, and each grammar's parser, linked into the binary:
	// native.go reaches them through their C symbols.
	_ "github.com/smacker/go-tree-sitter"
	_ "github.com/smacker/go-tree-sitter/bash"
	_ "github.com/smacker/go-tree-sitter/c"
	_ "github.com/smacker/go-tree-sitter/cpp"
	_ "github.com/smacker/go-tree-sitter/csharp"
	_ "github.com/smacker/go-tree-sitter/css"
	_ "github.com/smacker/go-tree-sitter/elixir"
	_ "github.com/smacker/go-tree-sitter/golang"
	_ "github.com/smacker/go-tree-sitter/hcl"
	_ "github.com/smacker/go-tree-sitter/html"
	_ "github.com/smacker/go-tree-sitter/java"
	_ "github.com/smacker/go-tree-sitter/javascript"
	_ "github.com/smacker/go-tree-sitter/kotlin"
	_ "github.com/smacker/go-tree-sitter/lua"
	_ "github.com/smacker/go-tree-sitter/php"
	_ "github.com/smacker/go-tree-sitter/python"
	_ "github.com/smacker/go-tree-sitter/ruby"
	_ "github.com/smacker/go-tree-sitter/rust"
	_ "github.com/smacker/go-tree-sitter/scala"
	_ "github.com/smacker/go-tree-sitter/swift"
	_ "github.com/smacker/go-tree-sitter/toml"
	_ "github.com/smacker/go-tree-sitter/typescript/tsx"
	_ "github.com/smacker/go-tree-sitter/typescript/typescript"
	_ "github.com/smacker/go-tree-sitter/yaml"
)
