package registry_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
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

func (nilly) Text() string { return "nils" }

func TestNilListsAreEmptyForStrictClients(t *testing.T) {
	tool := registry.Descriptor{Name: "nils", Tier: tiers.Read, Description: "nils",
		Handler: registry.Func(func(ctx context.Context, c *registry.Call, p noParams) (nilly, error) {
			return nilly{
				Ptr:     &inner{},
				List:    []inner{{}},
				ByName:  map[string][]string{"a": nil},
				ByInner: map[string]inner{"b": {}},
				Tree:    node{Name: "root", Children: []*leaf{{Name: "leaf"}}},
			}, nil
		})}
	r := newRun(t, registry.Config{Families: []registry.Extension{family("nils", tool)}})
	cl, err := r.Client(context.Background(), tiers.Normal)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	list, err := cl.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "nils"
	res, err := cl.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if err := registry.CheckResult(list.Tools[0], res); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
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

func TestCheckResultNamesWhereItFails(t *testing.T) {
	tool := mcp.Tool{Name: "t", RawOutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,
		"required":["breakpoints"],"properties":{"breakpoints":{"type":"array","items":{"type":"string"}},"n":{"type":"integer"}}}`)}
	for _, c := range []struct {
		content any
		want    string
	}{
		{map[string]any{"breakpoints": nil}, "at /breakpoints (null): got null, want array"},
		{map[string]any{}, "missing property 'breakpoints'"},
		{map[string]any{"breakpoints": []string{}, "extra": 1}, "additional properties 'extra' not allowed"},
		{map[string]any{"breakpoints": []any{1}}, "at /breakpoints/0 (1): got number, want string"},
		{nil, "no structured content"},
	} {
		res := &mcp.CallToolResult{StructuredContent: c.content}
		err := registry.CheckResult(tool, res)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error saying %q", c.content, err, c.want)
		}
	}
	ok := &mcp.CallToolResult{StructuredContent: map[string]any{"breakpoints": []string{"b1"}, "n": 2}}
	if err := registry.CheckResult(tool, ok); err != nil {
		t.Errorf("a valid result: %v", err)
	}
	if err := registry.CheckResult(tool, &mcp.CallToolResult{IsError: true}); err != nil {
		t.Errorf("an error result needs no structured content: %v", err)
	}
}
