package files_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/files"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// N2: the D1 lock was per process, so edits sent by several processes to
// one file were lost: four serve processes each sending 40 edits to
// distinct lines of one file reported 65–71 edits and 6–9 of them were not
// on disk. Here the test binary is run again as several editor processes,
// each with its own run over the same root sending its edits in parallel;
// every edit reported as done must be in the file, and every failure must
// say the file changed.

const (
	editorEnv   = "FILES_TEST_EDITOR" // root,first line,count: run as an editor
	editorProcs = 4
	editorEdits = 40
)

func TestMultiProcessEditsAllLand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts several processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	trials := 3
	if s := os.Getenv("FILES_TEST_TRIALS"); s != "" {
		trials, _ = strconv.Atoi(s)
	}
	lostTotal, reportedTotal := 0, 0
	for trial := 0; trial < trials; trial++ {
		h := newHarness(t)
		var b strings.Builder
		for i := 0; i < editorProcs*editorEdits; i++ {
			fmt.Fprintf(&b, "line %03d\n", i)
		}
		h.put("f.txt", b.String())
		var wg sync.WaitGroup
		outs := make([][]byte, editorProcs)
		errs := make([]error, editorProcs)
		for p := 0; p < editorProcs; p++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(exe, "-test.run=^TestEditorProcess$")
				cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d,%d", editorEnv, h.root, p*editorEdits, editorEdits))
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				outs[p], errs[p] = cmd.Output()
				if errs[p] != nil {
					errs[p] = fmt.Errorf("%v: %s", errs[p], stderr.String())
				}
			}()
		}
		wg.Wait()
		got := h.get("f.txt")
		var lost []int
		reported := 0
		for p := 0; p < editorProcs; p++ {
			if errs[p] != nil {
				t.Fatalf("editor %d: %v", p, errs[p])
			}
			sc := bufio.NewScanner(bytes.NewReader(outs[p]))
			for sc.Scan() {
				var r editorReport
				if json.Unmarshal(sc.Bytes(), &r) != nil {
					continue // the test framework's own lines
				}
				if r.Err != "" {
					if !strings.Contains(r.Err, "changed since it was read") {
						t.Errorf("editor %d, line %d failed for another reason: %s", p, r.Line, r.Err)
					}
					continue
				}
				reported++
				if !strings.Contains(got, fmt.Sprintf("line %03d edited\n", r.Line)) {
					lost = append(lost, r.Line)
				}
			}
		}
		t.Logf("trial %d: %d processes x %d edits: reported %d, lost %d %v", trial, editorProcs, editorEdits, reported, len(lost), lost)
		lostTotal += len(lost)
		reportedTotal += reported
	}
	if lostTotal > 0 {
		t.Fatalf("%d of %d edits reported as done are not in the file (%d trials)", lostTotal, reportedTotal, trials)
	}
}

type editorReport struct {
	Line int    `json:"line"`
	Err  string `json:"err,omitempty"`
}

// TestEditorProcess is one editor of TestMultiProcessEditsAllLand: a run
// over the root that edits its lines, all at once, and prints one JSON
// line per edit.
func TestEditorProcess(t *testing.T) {
	spec := os.Getenv(editorEnv)
	if spec == "" {
		t.Skip("run by TestMultiProcessEditsAllLand")
	}
	parts := strings.Split(spec, ",")
	first, _ := strconv.Atoi(parts[1])
	n, _ := strconv.Atoi(parts[2])
	run, err := registry.NewRun(registry.Config{Root: parts[0], Families: []registry.Extension{files.Family}})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := first; i < first+n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args, _ := json.Marshal(map[string]any{"path": "f.txt", "old_string": fmt.Sprintf("line %03d\n", i), "new_string": fmt.Sprintf("line %03d edited\n", i)})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := run.Call(ctx, tiers.Normal, "edit", args)
			r := editorReport{Line: i}
			switch {
			case err != nil:
				r.Err = err.Error()
			case res.IsError:
				r.Err = registry.ResultText(res)
			}
			line, _ := json.Marshal(r)
			mu.Lock()
			fmt.Println(string(line))
			mu.Unlock()
		}()
	}
	wg.Wait()
}
