//go:build hardening

package hardening

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// R13 (L-5): a notebook with two top-level "cells" lists: Python's json,
// and so Jupyter, keeps the last; eval ran the hidden first list's cell,
// which wrote hidden-ran.txt. Now the notebook is refused before anything
// runs.
func TestR13(t *testing.T) { runCase(t, "R13", caseR13) }

func caseR13(c *cx) {
	c.need("python3")
	root := c.root
	hidden := `{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "open('hidden-ran.txt', 'w').close()"}`
	shown := `{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "print('shown')"}`
	writeFile(filepath.Join(root, "dup.ipynb"), `{"cells": [`+hidden+`], "cells": [`+shown+`], "metadata": {"kernelspec": {"language": "python"}}, "nbformat": 4, "nbformat_minor": 5}`+"\n")
	s := c.serve(root, "--without", "lsp")
	defer s.close()
	r := s.tool("eval", map[string]any{"notebook": "dup.ipynb", "description": "run the notebook with two cell lists"})
	ran := exists(filepath.Join(root, "hidden-ran.txt"))
	c.line("eval notebook: of a notebook with two top-level cells lists: the hidden cell ran, answer",
		fmt.Sprintf("%s; %s", yesNo(ran), r.summary(160)), "yes; ran 2 cells, the hidden one included")
	c.want(!ran, "the hidden cell not run")
	c.want(r.isError && strings.Contains(r.text, `"cells" is given twice`), "a refusal naming the duplicate key")
}
