package toolschema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/registry/toolschema"
	"github.com/mark3labs/mcp-go/mcp"
)

// A result full of nils a handler forgets to make: lists and maps at every
// depth, an embedded struct, a map of lists.
type leaf struct {
	Name     string   `json:"name"`
	Children []string `json:"children"`
}

type node struct {
	Name     string  `json:"name"`
	Children []*leaf `json:"children"`
}

type inner struct {
	Tags   []string          `json:"tags"`
	Labels map[string]string `json:"labels"`
}

type Embedded struct {
	Promoted []int `json:"promoted"`
}

type nilly struct {
	Embedded
	Items    []string            `json:"items"`
	Optional []string            `json:"optional,omitempty"`
	Inner    inner               `json:"inner"`
	Ptr      *inner              `json:"ptr,omitempty"`
	List     []inner             `json:"list"`
	ByName   map[string][]string `json:"by_name"`
	ByInner  map[string]inner    `json:"by_inner"`
	Tree     node                `json:"tree"`
	Raw      json.RawMessage     `json:"raw,omitempty"`
}

// A result filled by WithoutNulls is what a strict client accepts under
// the schema Output gives its type, read as the client reads it: JSON.
func TestNilListsAreEmptyForStrictClients(t *testing.T) {
	schema, err := toolschema.Output[nilly]()
	if err != nil {
		t.Fatal(err)
	}
	tool := mcp.Tool{Name: "nils", RawOutputSchema: schema}
	filled := toolschema.WithoutNulls(nilly{
		Ptr:     &inner{},
		List:    []inner{{}},
		ByName:  map[string][]string{"a": nil},
		ByInner: map[string]inner{"b": {}},
		Tree:    node{Name: "root", Children: []*leaf{{Name: "leaf"}}},
	})
	b, err := json.Marshal(filled)
	if err != nil {
		t.Fatal(err)
	}
	var read map[string]any
	if err := json.Unmarshal(b, &read); err != nil {
		t.Fatal(err)
	}
	if err := toolschema.CheckResult(tool, &mcp.CallToolResult{StructuredContent: read}); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(read)
	got := string(b)
	for _, want := range []string{`"items":[]`, `"promoted":[]`, `"inner":{"labels":{},"tags":[]}`, `"ptr":{"labels":{},"tags":[]}`,
		`"list":[{"labels":{},"tags":[]}]`, `"by_name":{"a":[]}`, `"by_inner":{"b":{"labels":{},"tags":[]}}`,
		`"children":[{"children":[],"name":"leaf"}]`} {
		if !strings.Contains(got, want) {
			t.Errorf("structured content lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "optional") || strings.Contains(got, "raw") {
		t.Errorf("an omitempty field was filled:\n%s", got)
	}
}
