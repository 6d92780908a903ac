package adapter

// dart (dart debug_adapter) debugs Dart programs. It reads the common
// launch (Generic's: program, args, cwd).
var dartSpec = Spec{
	ID: "dart", Language: "Dart", Markers: []string{"pubspec.yaml"}, Extensions: []string{".dart"},
	Commands:    [][]string{{"dart", "debug_adapter"}},
	Transport:   Stdio,
	Install:     "install the Dart SDK (https://dart.dev/get-dart)",
	ExprContext: "repl",
	Adapter:     dart{},
}

type dart struct{ Generic }
