package langserver

import "regexp"

// Table returns the built-in table. Callers may append rows or
// replace the table in lsp's Config.Servers. Where two rows own the same
// extension (pyright, pylsp), the first one whose binary resolves is used.
func Table() []Spec {
	return []Spec{
		{
			ID:          "gopls",
			Language:    "Go",
			Command:     []string{"gopls"},
			Probe:       []string{"version"},
			Install:     "go install golang.org/x/tools/gopls@latest (scripts/install-lsp.sh installs it into .tools/bin)",
			RootMarkers: []string{"go.work", "go.mod"},
			Extensions:  map[string]string{".go": "go"},
			Checker:     []string{"go", "vet", "./..."},
			Indexes:     true,
			// With no delay gopls diagnoses a change in one pass, type
			// errors and analyses together, and publishes it once per
			// version; with one (1s by default) it publishes type errors
			// first and the analyses' findings in a second publish later.
			PublishesOnce: true,
			Confirm:       confirmGopls,
			Settings: map[string]any{
				"gopls": map[string]any{"diagnosticsDelay": "0s", "symbolScope": "workspace"},
			},
		},
		{
			ID:           "pyright",
			Language:     "Python",
			Command:      []string{"pyright-langserver", "--stdio"},
			Install:      "npm install pyright (scripts/install-lsp.sh installs it into .tools/node_modules)",
			RootMarkers:  []string{"pyrightconfig.json", "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"},
			Extensions:   map[string]string{".py": "python", ".pyi": "python"},
			LocalBinDirs: []string{"node_modules/.bin", ".venv/bin", "venv/bin"},
			Checker:      []string{"pyright"},
			FixCommands:  map[string]string{"organize_imports": "pyright.organizeimports"},
			LoadedLog:    regexp.MustCompile(`^(Found \d+ source files?|No source files found\.)$`),
			FormatNote:   "pyright has no formatter; run black or ruff format from a shell",
			Settings: map[string]any{
				"python":          map[string]any{},
				"python.analysis": map[string]any{"diagnosticMode": "openFilesOnly"},
			},
		},
		{
			ID:           "pylsp",
			Language:     "Python",
			Command:      []string{"pylsp"},
			Probe:        []string{"--version"},
			Install:      "apt-get install python3-pylsp",
			RootMarkers:  []string{"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"},
			Extensions:   map[string]string{".py": "python"},
			LocalBinDirs: []string{".venv/bin", "venv/bin"},
			CheckerNote:  "pylsp has no project checker; install pyright for diagnostics \"*\"",
		},
		{
			ID:          "typescript-language-server",
			Language:    "TypeScript/JavaScript",
			Command:     []string{"typescript-language-server", "--stdio"},
			Probe:       []string{"--version"},
			Install:     "npm install typescript-language-server typescript (scripts/install-lsp.sh installs them into .tools/node_modules)",
			RootMarkers: []string{"tsconfig.json", "jsconfig.json", "package.json"},
			Extensions: map[string]string{
				".ts": "typescript", ".tsx": "typescriptreact", ".mts": "typescript", ".cts": "typescript",
				".js": "javascript", ".jsx": "javascriptreact", ".mjs": "javascript", ".cjs": "javascript",
			},
			LocalBinDirs: []string{"node_modules/.bin"},
			Checker:      []string{"tsc", "--noEmit", "--pretty", "false"},
			Indexes:      true,
			Prepare:      prepareTypeScript,
			Pull:         pullTSServer,
		},
		{
			ID:       "clangd",
			Language: "C/C++",
			Command:  []string{"clangd", "--background-index", "--log=error"},
			Probe:    []string{"--version"},
			Prepare:  prepareClangd,
			// clangd reads the copy Prepare makes, never the file itself.
			PrepareReads: clangdDatabases,
			Install:      "apt-get install clangd",
			RootMarkers:  []string{"compile_commands.json", "compile_flags.txt", "CMakeLists.txt", ".clangd"},
			Extensions: map[string]string{
				".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp",
				".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
			},
			CheckerNote: "C/C++ has no project checker here; run your build (cmake --build, make) or ask diagnostics for each file",
			Indexes:     true,
			// clangd publishes a version's diagnostics once, from the AST
			// built with that version's preamble (clang-tidy's included).
			PublishesOnce: true,
		},
		{
			ID:          "rust-analyzer",
			Language:    "Rust",
			Command:     []string{"rust-analyzer"},
			Probe:       []string{"--version"},
			Install:     "rustup component add rust-analyzer",
			RootMarkers: []string{"Cargo.toml"},
			Extensions:  map[string]string{".rs": "rust"},
			Checker:     []string{"cargo", "check", "--message-format=short"},
			CheckerRunsCode: "cargo check compiles and runs the crate's build scripts (build.rs) and procedural macros, " +
				"and writes target/ and Cargo.lock into the checkout",
			Indexes: true,
			Prepare: prepareRustAnalyzer,
			// A configuration written into the root after the start is
			// refused as one there before it would be.
			PrepareReads: cargoConfigNames,
		},
		{
			ID:              "dart",
			Language:        "Dart",
			Command:         []string{"dart", "language-server", "--protocol=lsp"},
			Probe:           []string{"--version"},
			Install:         "install the Dart SDK (https://dart.dev/get-dart)",
			RootMarkers:     []string{"pubspec.yaml"},
			Extensions:      map[string]string{".dart": "dart"},
			Checker:         []string{"dart", "analyze"},
			CheckerRunsCode: "dart analyze runs the analyzer plugins analysis_options.yaml names, which are packages of the project",
			Indexes:         true,
		},
	}
}
