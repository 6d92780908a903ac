package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Golden holds got to the golden file at path; with update (the package's
// -update flag) it writes got there instead. A difference is reported as
// the first line that differs and the lines only one side has.
func Golden(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -update and review the diff):\n%s", path, LineDiff(string(want), got))
	}
}

// LineDiff is the first line where got leaves want, then the lines only
// want has (-) and only got has (+), at most 60 of them.
func LineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		wl, gl := at(w, i), at(g, i)
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\nwant: %s\ngot:  %s\n", i+1, wl, gl)
			break
		}
	}
	in := func(lines []string) map[string]bool {
		m := make(map[string]bool, len(lines))
		for _, l := range lines {
			m[l] = true
		}
		return m
	}
	inW, inG := in(w), in(g)
	n := 0
	for _, side := range []struct {
		mark  string
		lines []string
		other map[string]bool
	}{{"- ", w, inG}, {"+ ", g, inW}} {
		for _, l := range side.lines {
			if !side.other[l] && n < 60 {
				b.WriteString(side.mark + l + "\n")
				n++
			}
		}
	}
	return b.String()
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}
