package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// N4: hover quotes the declaration of the symbol (a constant's value, its
// doc comment). A symbol declared outside the root — a module a go.mod
// replace names, a relative import out of the checkout, a folder linked in
// — is not quoted by hover, as it is not by definition; `read` refuses
// those files too.

const (
	goSecret  = "sk-live-THIS-IS-OUTSIDE-THE-ROOT"
	goSecretD = "Token is the production API token."
	tsSecret  = "sk-live-TS-OUTSIDE-SECRET"
	tsSecretD = "The production token."
)

// expectWithheld fails if any of secrets is anywhere in the hover result,
// or the result does not say it was withheld because of where the symbol
// is declared.
func expectWithheld(t *testing.T, h *answer.Hover, where string, secrets ...string) {
	t.Helper()
	data, _ := json.Marshal(h)
	for _, s := range secrets {
		if strings.Contains(string(data), s) {
			t.Errorf("hover quotes %q from outside the root: %s", s, data)
		}
	}
	if h.Contents != "" || !strings.Contains(h.Withheld, "defined outside the root") || !strings.Contains(h.Withheld, where) {
		t.Errorf("hover: want it withheld, saying the symbol is defined outside the root in %s; got %s", where, data)
	}
}

func TestHoverWithholdsWhatIsDeclaredOutsideTheRoot(t *testing.T) {
	t.Parallel()
	t.Run("go replace", func(t *testing.T) {
		t.Parallel()
		root := appCheckout(t, map[string]string{
			"secret/go.mod": "module example.com/sec\n\ngo 1.22\n",
			"secret/s.go":   "package sec\n\n// " + goSecretD + "\nconst Token = \"" + goSecret + "\"\n",
			"app/go.mod":    "module example.com/app\n\ngo 1.22\n\nrequire example.com/sec v0.0.0\n\nreplace example.com/sec => ../secret\n",
			"app/main.go":   "package main\n\nimport \"example.com/sec\"\n\nfunc main() { println(sec.Token) }\n\n// Local is declared here.\nconst Local = 1\n\nvar _ = Local\n",
		})
		s := sessionAt(t, root, "gopls")
		if def := must(s.sup.Definition(s.ctx, s.at("main.go"), protocol.Place{Line: 5, Symbol: "Token"}))(t); len(def.Locations) != 1 || !def.Locations[0].Outside {
			t.Fatalf("definition: want one location outside the root, got %+v", def.Locations)
		}
		expectWithheld(t, must(s.sup.Hover(s.ctx, s.at("main.go"), protocol.Place{Line: 5, Symbol: "Token"}))(t), "secret/s.go", goSecret, goSecretD)
		// Inside the root hover is quoted as before.
		if h := must(s.sup.Hover(s.ctx, s.at("main.go"), protocol.Place{Line: 10, Symbol: "Local"}))(t); !strings.Contains(h.Contents, "Local is declared here") || h.Withheld != "" {
			t.Errorf("hover inside the root: %+v", h)
		}
	})
	t.Run("go linked folder", func(t *testing.T) {
		t.Parallel()
		root := appCheckout(t, map[string]string{
			"outside/s.go": "package ext\n\n// " + goSecretD + "\nconst Token = \"" + goSecret + "\"\n",
			"app/go.mod":   "module example.com/app\n\ngo 1.22\n",
			"app/main.go":  "package main\n\nimport \"example.com/app/ext\"\n\nfunc main() { println(ext.Token) }\n",
		})
		if err := os.Symlink(filepath.Join(root, "..", "outside"), filepath.Join(root, "ext")); err != nil {
			t.Fatal(err)
		}
		s := sessionAt(t, root, "gopls")
		expectWithheld(t, must(s.sup.Hover(s.ctx, s.at("main.go"), protocol.Place{Line: 5, Symbol: "Token"}))(t), "ext/s.go", goSecret, goSecretD)
	})
	t.Run("typescript relative import", func(t *testing.T) {
		t.Parallel()
		root := appCheckout(t, map[string]string{
			"outside/secret.ts": "/** " + tsSecretD + " */\nexport const token = \"" + tsSecret + "\";\n",
			"app/tsconfig.json": `{"compilerOptions": {"strict": true}}`,
			"app/a.ts":          "import { token } from \"../outside/secret\";\nconsole.log(token);\n",
		})
		s := sessionAt(t, root, "typescript-language-server")
		// Until tsserver has loaded the project, both hover and definition
		// know only the import binding.
		testenv.WaitFor(t, time.Minute, "the definition outside the root", func() bool {
			def, err := s.sup.Definition(s.ctx, s.at("a.ts"), protocol.Place{Line: 2, Symbol: "token"})
			return err == nil && len(def.Locations) == 1 && def.Locations[0].Outside
		})
		expectWithheld(t, must(s.sup.Hover(s.ctx, s.at("a.ts"), protocol.Place{Line: 2, Symbol: "token"}))(t), "outside/secret.ts", tsSecret, tsSecretD)
		// Library code the toolchain installed (TypeScript's lib.*.d.ts,
		// under node_modules) is quoted: it is no one's secret.
		if h := must(s.sup.Hover(s.ctx, s.at("a.ts"), protocol.Place{Line: 2, Symbol: "log"}))(t); h.Withheld != "" || !strings.Contains(h.Contents, "log(") {
			t.Errorf("hover on console.log: %+v", h)
		}
	})
	t.Run("go standard library", func(t *testing.T) {
		t.Parallel()
		root := resolved(t)
		plant(t, root, "", map[string]string{
			"go.mod":  "module example.com/app\n\ngo 1.22\n",
			"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(1) }\n",
		})
		s := sessionAt(t, root, "gopls")
		if h := must(s.sup.Hover(s.ctx, s.at("main.go"), protocol.Place{Line: 5, Symbol: "Println"}))(t); h.Withheld != "" || !strings.Contains(h.Contents, "func fmt.Println") {
			t.Errorf("hover on fmt.Println: %+v", h)
		}
	})
}

// N4 for code actions: a fix whose edit changes a file outside the root
// may name what is there in its title; the title is withheld.
func TestCodeActionTitlesForOutsideEditsAreWithheld(t *testing.T) {
	t.Parallel()
	root := appCheckout(t, map[string]string{
		"outside/secret.ts": "export const token = \"" + tsSecret + "\";\n",
		"app/tsconfig.json": `{"compilerOptions": {"strict": true}}`,
		"app/a.ts":          "import * as secret from \"../outside/secret\";\nsecret.missingHelper(1);\n",
	})
	s := sessionAt(t, root, "typescript-language-server")
	// The fix hangs off the diagnostic, which comes once the project is
	// loaded.
	testenv.WaitFor(t, time.Minute, "the diagnostic for missingHelper", func() bool {
		d, err := s.sup.Diagnostics(s.ctx, s.at("a.ts"))
		return err == nil && strings.Contains(diagKeys(root, d.Diagnostics), "missingHelper")
	})
	res := must(s.sup.CodeActions(s.ctx, s.at("a.ts"), protocol.Place{Line: 2, Symbol: "missingHelper"}))(t)
	outside := 0
	for _, a := range res.Actions {
		for _, f := range a.Files {
			if strings.Contains(f, "outside/secret.ts") {
				outside++
				if a.Title != "" || !strings.Contains(a.Withheld, "outside the root") {
					t.Errorf("an action editing %s keeps its title %q (withheld %q)", f, a.Title, a.Withheld)
				}
			}
		}
	}
	if outside == 0 {
		t.Fatalf("the server offered no fix that edits the outside file; the test cannot check the titles: %+v", res.Actions)
	}
}

// appCheckout plants files in a fresh folder whose app/ is the checkout,
// so that what is not under app/ lies outside the root, and gives the
// root.
func appCheckout(t *testing.T, files map[string]string) string {
	t.Helper()
	base := resolved(t)
	plant(t, base, "", files)
	return filepath.Join(base, "app")
}

// sessionAt opens a Supervisor on root for program's server.
func sessionAt(t *testing.T, root, program string) *session {
	t.Helper()
	testenv.LookPath(t, program)
	return openSession(t, root, Config{})
}
