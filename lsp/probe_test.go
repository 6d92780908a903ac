package lsp

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// Issue 18: a probe that never ends (a server whose --version hangs, with
// a child in its group and one that left it with setsid) is bounded by
// ProbeTimeout, reported as not running, and leaves nothing behind.
func TestHungProbeIsBoundedAndLeavesNothing(t *testing.T) {
	t.Parallel()
	pids := filepath.Join(resolved(t), "pids")
	bin := filepath.Join(resolved(t), "hangs")
	script(t, bin, `if [ "$1" = --version ]; then
	sleep 301 & echo $! >> `+pids+`
	setsid sleep 302 & echo $! >> `+pids+`
	echo $$ >> `+pids+`
	wait
fi
exit 1
`)
	spec := langserver.Spec{ID: "hangs", Language: "Fake", Command: []string{bin}, Probe: []string{"--version"}, Install: "fix it",
		RootMarkers: []string{"fake.toml"}, Extensions: map[string]string{".fake": "fake"}}
	root := fakeRoot(t)
	sup := NewSupervisor(root, Config{Servers: []langserver.Spec{spec}, ProbeTimeout: time.Second})
	defer sup.Close()
	// The row's error names the probe's timeout: it, not the probe's end
	// (minutes away), ended the wait.
	row := statusRow(t, sup.Status(t.Context()), "hangs")
	if row.State != answer.StateBroken {
		t.Errorf("status: want broken, got %+v", row)
	}
	expectContains(t, "status", row.RunError, "`"+bin+" --version` did not finish within 1s")
	_, err := sup.Hover(t.Context(), loc(t, sup, filepath.Join(root, "a.fake")), protocol.Place{Line: 1, Symbol: "world"})
	expectErr(t, "hover", err, ErrUnavailable, "is installed but does not run", "did not finish within 1s", "install it: fix it")

	data, _ := os.ReadFile(pids)
	ids := strings.Fields(string(data))
	if len(ids) != 3 {
		t.Fatalf("the probe recorded %q; want three processes", ids)
	}
	for _, id := range ids {
		if n, _ := strconv.Atoi(id); !testenv.Gone(n) {
			t.Errorf("process %d of the probe still runs", n)
		}
	}
}
