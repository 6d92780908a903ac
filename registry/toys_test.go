package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/registry/toolschema"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// Toy tools, so the registry's tests depend on no family's wording.

type msg struct {
	Msg string `json:"msg"`
}

func (m msg) Text() string { return m.Msg }

type lookParams struct {
	Path  string `json:"path" jsonschema:"a path"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many"`
}

type putParams struct {
	Path    string `json:"path" jsonschema:"a path"`
	Content string `json:"content" jsonschema:"what to write"`
}

var lookTool = registry.Descriptor{Name: "look", Tier: tiers.Read, Description: "reads a file",
	Handler: registry.Func(func(ctx context.Context, c *registry.Call, p lookParams) (msg, error) {
		abs, err := c.Path(p.Path)
		if err != nil {
			return msg{}, err
		}
		b, err := os.ReadFile(abs)
		if err != nil {
			return msg{}, fmt.Errorf("cannot read %s", c.Rel(abs))
		}
		return msg{string(b)}, nil
	})}

var putTool = registry.Descriptor{Name: "put", Tier: tiers.Write, Description: "writes a file", Writes: true,
	Handler: registry.Func(func(ctx context.Context, c *registry.Call, p putParams) (msg, error) {
		abs, err := c.Path(p.Path)
		if err != nil {
			return msg{}, err
		}
		os.MkdirAll(filepath.Dir(abs), 0o755)
		if err := os.WriteFile(abs, []byte(p.Content), 0o644); err != nil {
			return msg{}, err
		}
		c.Wrote(abs)
		return msg{"created " + c.Rel(abs)}, nil
	})}

type noParams struct{}

func toolOf(name string, tier tiers.Tier, fn func(ctx context.Context, c *registry.Call) (string, error)) registry.Descriptor {
	return registry.Descriptor{Name: name, Tier: tier, Description: name,
		Handler: registry.Func(func(ctx context.Context, c *registry.Call, p noParams) (msg, error) {
			s, err := fn(ctx, c)
			return msg{s}, err
		})}
}

// family makes a family of tools needing no resource.
func family(name string, tools ...registry.Descriptor) registry.Extension {
	return registry.Family[registry.None]{Key: registry.NewKey[registry.None](name), Tools: tools}
}

var toyFiles = family("toyfiles", lookTool, putTool)

func newRun(t *testing.T, cfg registry.Config) *registry.Run {
	t.Helper()
	if cfg.Root == "" {
		cfg.Root = t.TempDir()
	}
	if cfg.Families == nil {
		cfg.Families = []registry.Extension{toyFiles}
	}
	r, err := registry.NewRun(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func call(t *testing.T, r *registry.Run, mode tiers.Mode, name, args string) (string, bool) {
	t.Helper()
	res, err := r.Call(context.Background(), mode, name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	for _, tool := range r.Visible(mode) {
		if tool.Name == name {
			if err := toolschema.CheckResult(tool, res); err != nil {
				t.Errorf("%s %s: a strict client would throw this result away: %v", name, args, err)
			}
		}
	}
	return registry.ResultText(res), res.IsError
}

// listTools is the tools c's server lists.
func listTools(t *testing.T, c *client.Client) []mcp.Tool {
	t.Helper()
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// closer is a resource that records when it is closed.
type closer struct {
	name string
	log  *[]string
	mu   *sync.Mutex
}

func (c *closer) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	*c.log = append(*c.log, c.name)
	return nil
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
