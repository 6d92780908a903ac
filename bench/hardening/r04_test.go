//go:build hardening

package hardening

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// R4 (M-2): `eval notebook:` kept every cell's whole output in memory and
// wrote it all back: 4 cells × 20 MB took serve to 493 MiB and wrote a
// 77 MiB notebook, which eval then refused to read (the report: 8 × 40 MB
// took 1.96 GB and wrote 335 MB). Now what is written back is capped per
// output and per run, serve's memory stays bounded, and the notebook
// stays one eval reads.
func TestR4(t *testing.T) { runCase(t, "R4", caseR4) }

func caseR4(c *cx) {
	c.need("python3")
	root := c.root
	const src = "import sys\nline = 'x' * 999 + '\\n'\nfor i in range(20_000):\n    sys.stdout.write(line)\n"
	var cells []map[string]any
	for i := 0; i < 4; i++ {
		cells = append(cells, map[string]any{"cell_type": "code", "execution_count": nil, "metadata": map[string]any{}, "outputs": []any{}, "source": src})
	}
	b, _ := json.MarshalIndent(map[string]any{"cells": cells, "metadata": map[string]any{"kernelspec": map[string]any{"language": "python", "name": "python3"}},
		"nbformat": 4, "nbformat_minor": 5}, "", " ")
	nb := filepath.Join(root, "big.ipynb")
	writeFile(nb, string(b)+"\n")
	s := c.serveIn(memLimit, root, nil, "--without", "lsp")
	defer s.close()
	h0 := s.hwm()
	args := map[string]any{"notebook": "big.ipynb", "description": "run the notebook of big outputs"}
	r := s.toolWithin(5*time.Minute, "eval", args)
	h := s.hwm()
	fi, err := os.Stat(nb)
	size := int64(-1)
	if err == nil {
		size = fi.Size()
	}
	again := s.toolWithin(5*time.Minute, "eval", args)
	c.line("eval notebook: of 4 cells printing 20 MB each: serve's VmHWM (before), notebook size, a second run of it",
		fmt.Sprintf("%s (%s), %s; %s; again: %s", mib(h), mib(h0), byteSize(int(size)), r.summary(80), again.summary(80)),
		"493 MiB (24 MiB), 80881311 bytes (77.1 MiB); the second run refused it as over the 64 MiB eval reads (the report: 583 MB, 84 MB; 8 × 40 MB: 1.96 GB, 335 MB)")
	c.want(r.ok() && again.ok(), "both runs answer without an error")
	c.want(h > 0 && h < 200<<10, "serve under 200 MiB")
	c.want(size > 0 && size <= 17<<20, "a notebook of at most 17 MiB")
}
