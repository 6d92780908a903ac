package notebook

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const sample = "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": null,\n   \"metadata\": {},\n   \"outputs\": [],\n   \"source\": [\n    \"1 + 1\"\n   ]\n  },\n  {\n   \"cell_type\": \"code\",\n   \"metadata\": {},\n   \"source\": \"x\"\n  }\n ],\n \"metadata\": {},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n"

// Outputs replace a cell's outputs and count where they are, and are added
// to a cell that has neither key; everything else stays byte for byte.
func TestApply(t *testing.T) {
	nb, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	two := 2
	out, err := nb.Apply([]Update{
		{N: 1, Count: 2, Outputs: []Output{{Type: "execute_result", Count: &two, Data: map[string]json.RawMessage{"text/plain": TextData("2")}}}},
		{N: 2, Count: 3, Outputs: []Output{{Type: "stream", Name: "stdout", Text: "a\nb\n"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	nb2, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if c := nb2.Cells[0]; *c.Count != 2 || len(c.Outputs) != 1 || c.Outputs[0].DataText("text/plain") != "2" {
		t.Fatalf("cell 1: %+v\n%s", c, out)
	}
	if c := nb2.Cells[1]; c.Count == nil || *c.Count != 3 || string(c.Outputs[0].Text) != "a\nb\n" || c.Source != "x" {
		t.Fatalf("cell 2: %+v\n%s", c, out)
	}
	head := sample[:bytes.Index([]byte(sample), []byte(`"execution_count"`))]
	tail := sample[bytes.Index([]byte(sample), []byte("\n ],\n \"metadata\"")):]
	if !bytes.HasPrefix(out, []byte(head)) || !bytes.HasSuffix(out, []byte(tail)) {
		t.Fatalf("the rest of the file changed:\n%s", out)
	}
}

func TestRange(t *testing.T) {
	for spec, want := range map[string][]int{"all": {1, 2, 3, 4}, "": {1, 2, 3, 4}, "2": {2}, "2-3": {2, 3}, "1, 3-4,3": {1, 3, 4}} {
		got, err := Range(spec, 4)
		if err != nil || len(got) != len(want) {
			t.Fatalf("%q: %v %v", spec, got, err)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: %v", spec, got)
			}
		}
	}
	for _, bad := range []string{"0", "3-2", "x", "1-", "5", "-1"} {
		if _, err := Range(bad, 4); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

// Parse never panics, and what it accepts renders and takes outputs.
func FuzzParse(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte(`{"cells":[{"cell_type":"markdown","source":["a","b"]}],"nbformat":4}`))
	f.Add([]byte(`{"nbformat":4,"cells":[{"cell_type":"code","outputs":[{"output_type":"stream","text":"x"}]}]}`))
	f.Add([]byte(`[1]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		nb, err := Parse(data)
		if err != nil {
			return
		}
		nb.Render("x.ipynb", 1, 0, 4000)
		var ups []Update
		for _, c := range nb.Cells {
			if c.Type == "code" {
				ups = append(ups, Update{N: c.N, Count: 1, Outputs: []Output{{Type: "stream", Name: "stdout", Text: "y\n"}}})
			}
		}
		if len(ups) > 0 {
			out, err := nb.Apply(ups)
			if err != nil {
				t.Fatalf("Apply: %v\n%q", err, data)
			}
			if _, err := Parse(out); err != nil {
				t.Fatalf("Apply's notebook does not parse: %v\n%q", err, out)
			}
		}
	})
}

// R13 (L-5): a key given twice at the top level or in a cell is refused:
// Python's json, and so Jupyter, keeps the last, and the first would run
// (and be listed) unseen. Keys match exactly, as in Python: a "CELLS" key
// is not the cells.
func TestDuplicateKeys(t *testing.T) {
	hidden := `{"cell_type": "code", "metadata": {}, "outputs": [], "source": "open('hidden-ran.txt', 'w')"}`
	shown := `{"cell_type": "code", "metadata": {}, "outputs": [], "source": "print('shown')"}`
	for _, tc := range []struct{ nb, want string }{
		{`{"cells": [` + hidden + `], "cells": [` + shown + `], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}`,
			`the key "cells" is given twice at the top level: Jupyter keeps only the last`},
		{`{"cells": [` + shown + `], "metadata": {}, "nbformat": 4, "nbformat": 4, "nbformat_minor": 5}`,
			`the key "nbformat" is given twice at the top level`},
		{`{"cells": [` + shown + `, {"cell_type": "code", "source": "1", "source": "2", "outputs": []}], "metadata": {}, "nbformat": 4}`,
			`the key "source" is given twice in cell 2`},
		{`{"cells": [{"cell_type": "code", "source": "1", "outputs": [], "outputs": []}], "metadata": {}, "nbformat": 4}`,
			`the key "outputs" is given twice in cell 1`},
	} {
		_, err := Parse([]byte(tc.nb))
		if err == nil || !errors.Is(err, ErrDuplicateKey) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n%v, want %q", tc.nb, err, tc.want)
		}
	}
	nb, err := Parse([]byte(`{"CELLS": [` + hidden + `], "cells": [` + shown + `], "metadata": {}, "nbformat": 4}`))
	if err != nil || len(nb.Cells) != 1 || nb.Cells[0].Source != "print('shown')" {
		t.Fatalf("a CELLS key beside cells: %+v %v", nb, err)
	}
}
