//go:build hardening

package hardening

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// R16 (L-8): under --approve write=deny (exec allowed), `eval notebook:`
// wrote the cells' outputs into the notebook. Now the cells run, their
// outputs come back, and the file is left as it was.
func TestR16(t *testing.T) { runCase(t, "R16", caseR16) }

func caseR16(c *cx) {
	c.need("python3")
	root := c.root
	b, _ := json.MarshalIndent(map[string]any{"cells": []any{map[string]any{"cell_type": "code", "execution_count": nil, "metadata": map[string]any{},
		"outputs": []any{}, "source": "print('ran')"}}, "metadata": map[string]any{"kernelspec": map[string]any{"language": "python"}},
		"nbformat": 4, "nbformat_minor": 5}, "", " ")
	nb := filepath.Join(root, "nb.ipynb")
	writeFile(nb, string(b)+"\n")
	s := c.serve(root, "--without", "lsp", "--approve", "write=deny")
	defer s.close()
	r := s.tool("eval", map[string]any{"notebook": "nb.ipynb", "description": "run the notebook under write deny"})
	changed := readFile(nb) != string(b)+"\n"
	c.line("eval notebook: under --approve write=deny: the notebook changed, answer",
		fmt.Sprintf("%s; %s", yesNo(changed), r.summary(200)), "yes: outputs written through the commit plan without the write gate")
	c.want(!changed, "the notebook left as it was")
	c.want(r.ok() && strings.Contains(r.text, "ran") && strings.Contains(r.text, "Not written: this run's approval policy denies writes"), "the outputs shown, and why nothing was written")
}
