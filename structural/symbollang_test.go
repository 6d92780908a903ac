package structural_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/graph/graphtool"
	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
	"github.com/builtin-tools/builtin-tools/tiers"
)

const ktCart = `package shop

/** A cart. */
class Cart(val owner: String) {
    private val items = ArrayList<String>()

    /** Count the items. */
    fun total(): Int {
        return items.size
    }

    @Deprecated("old")
    fun describe(): String {
        return "cart"
    }
}

// Top adds one.
fun top(x: Int): Int {
    return x + 1
}
`

const rbGreeter = `# A greeter.
class Greeter
  # Says hello.
  def hello(name)
    "hi #{name}"
  end

  def bye
    "bye"
  end
end
`

// A language added as data (graph.Options.QueryDirs: language.json,
// tags.scm and shapes.scm, no Go code) is edited by edit_symbol: Kotlin
// (braces, annotations, Javadoc-style comments) and Ruby (bodies without
// braces that hold braces of their own, # comments, two-space indent).
// A language with no shapes.scm is indexed but not edited, saying why.
func TestEditSymbolLanguageAddedAsData(t *testing.T) {
	langs, err := filepath.Abs("testdata/languages")
	if err != nil {
		t.Fatal(err)
	}
	r := newRun(t, map[string]string{"src/Cart.kt": ktCart, "lib/greeter.rb": rbGreeter, "m.lua": "function helper() end\n"},
		builtintools.Options{Settings: map[string]any{"code_graph": graphtool.Config{Options: graph.Options{QueryDirs: []string{langs}}}}})
	steps := []struct {
		args map[string]any
		want string // in the text result
	}{
		{map[string]any{"symbol": "Cart.total", "operation": "replace_body", "new_text": "var n = 0\nfor (s in items) {\n    n++\n}\nreturn n"},
			"replaced the body of method Cart.total in src/Cart.kt; it is now at lines 8-14"},
		{map[string]any{"symbol": "Cart.total", "operation": "insert_after", "new_text": "/** Add one. */\nfun add(item: String) {\n    items.add(item)\n}"},
			"inserted after method Cart.total in src/Cart.kt; the new text is at lines 16-19"},
		{map[string]any{"symbol": "Cart.describe", "operation": "replace", "new_text": "fun describe(): String {\n    return \"cart of \" + items.size\n}"},
			"replaced method Cart.describe in src/Cart.kt; it is now at lines 21-24"},
		{map[string]any{"symbol": "top", "operation": "replace", "new_text": "// Top adds two.\nfun top(x: Int): Int {\n    return x + 2\n}"},
			"replaced function top in src/Cart.kt; it is now at lines 27-30"},
		{map[string]any{"symbol": "Greeter.hello", "operation": "replace_body", "new_text": "opts = { loud: true }\n\"hi #{name}#{opts[:loud] ? '!' : ''}\""},
			"replaced the body of method Greeter.hello in lib/greeter.rb; it is now at lines 4-7"},
		{map[string]any{"symbol": "Greeter.bye", "operation": "replace", "new_text": "# Says bye.\ndef bye\n  \"bye\"\nend"},
			"replaced method Greeter.bye in lib/greeter.rb; it is now at lines 9-12"},
		{map[string]any{"symbol": "Greeter.hello", "operation": "insert_after", "new_text": "def wave\n  \"o/\"\nend"},
			"inserted after method Greeter.hello in lib/greeter.rb; the new text is at lines 9-11"},
	}
	for _, s := range steps {
		text, isErr := runtest.Call(t, r, tiers.Normal, "edit_symbol", s.args)
		if isErr || !strings.HasPrefix(text, s.want+"\n") {
			t.Fatalf("%v: (error=%v) %s\nwant %s", s.args, isErr, text, s.want)
		}
	}
	wantKt := `package shop

/** A cart. */
class Cart(val owner: String) {
    private val items = ArrayList<String>()

    /** Count the items. */
    fun total(): Int {
        var n = 0
        for (s in items) {
            n++
        }
        return n
    }

    /** Add one. */
    fun add(item: String) {
        items.add(item)
    }

    @Deprecated("old")
    fun describe(): String {
        return "cart of " + items.size
    }
}

// Top adds two.
fun top(x: Int): Int {
    return x + 2
}
`
	wantRb := `# A greeter.
class Greeter
  # Says hello.
  def hello(name)
    opts = { loud: true }
    "hi #{name}#{opts[:loud] ? '!' : ''}"
  end

  def wave
    "o/"
  end

  # Says bye.
  def bye
    "bye"
  end
end
`
	for file, want := range map[string]string{"src/Cart.kt": wantKt, "lib/greeter.rb": wantRb} {
		if got, _ := os.ReadFile(filepath.Join(r.Root(), file)); string(got) != want {
			t.Errorf("%s:\n%s\nwant:\n%s", file, got, want)
		}
	}

	text, isErr := runtest.Call(t, r, tiers.Normal, "edit_symbol", map[string]any{"symbol": "helper", "operation": "replace", "new_text": "function helper() return 1 end"})
	if !isErr || !strings.Contains(text, "the code graph's language lua has no shapes.scm") {
		t.Fatalf("a language with no shapes.scm: (error=%v) %s", isErr, text)
	}
}
