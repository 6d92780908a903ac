package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

// stamper is a service one toy family provides and another uses, found by
// its type as lsp_rename's preview finds staged.Stager.
type stamper interface{ Stamp() string }

type inkpad struct{ colour string }

func (p *inkpad) Stamp() string { return "stamped in " + p.colour }

var inkKey = registry.NewKey[*inkpad]("ink")

func inkFamily(open func(*registry.Env) (*inkpad, error)) registry.Extension {
	return registry.Family[*inkpad]{Key: inkKey, Open: open,
		Provides: []registry.Provision[*inkpad]{registry.Provide(func(p *inkpad) stamper { return p })}}
}

var red = inkFamily(func(*registry.Env) (*inkpad, error) { return &inkpad{"red"}, nil })

var stamping = registry.RequiresService[stamper]("stamping", "stamp")

var stampTool = registry.Descriptor{Name: "stamp", Tier: tiers.Read, Description: "stamps",
	Handler: registry.Func(func(ctx context.Context, c *registry.Call, p noParams) (msg, error) {
		s, ok := stamping.Of(c.Run)
		if !ok {
			return msg{}, errors.New("cannot stamp: " + stamping.Missing(c.Run))
		}
		return msg{s.Stamp()}, nil
	})}

var desk = registry.Family[registry.None]{Key: registry.NewKey[registry.None]("desk"), Tools: []registry.Descriptor{stampTool},
	Requires: []registry.Requirement{stamping}}

// A family's declared use of a service finds the one family that provides
// it, by type; without it the run still opens, and the run, its peers'
// instructions and the tool itself say which tools lose what, and why.
func TestRequiredService(t *testing.T) {
	r := newRun(t, registry.Config{Families: []registry.Extension{desk, red}})
	if out, isErr := call(t, r, tiers.Normal, "stamp", `{}`); isErr || out != "stamped in red" {
		t.Fatalf("stamp with the ink family: (error=%v) %q", isErr, out)
	}
	if d := r.Degraded(); len(d) != 0 {
		t.Fatalf("nothing is missing, yet Degraded says %v", d)
	}
	skip := inkFamily(func(*registry.Env) (*inkpad, error) { return nil, registry.ErrSkip })
	for _, tc := range []struct {
		name     string
		families []registry.Extension
		without  []string
		reason   string
	}{
		{"left out", []registry.Extension{desk, red}, []string{"ink"}, "the ink family was left out of this run"},
		{"skipped", []registry.Extension{desk, skip}, nil, "the ink family attached nothing in this run"},
		{"none", []registry.Extension{desk}, nil, "no family of this run provides a registry_test.stamper"},
	} {
		r := newRun(t, registry.Config{Families: tc.families, Without: tc.without})
		d := r.Degraded()
		if len(d) != 1 || d[0].Family != "desk" || strings.Join(d[0].Tools, ",") != "stamp" || d[0].Why != "stamping" ||
			!strings.HasPrefix(d[0].Reason, tc.reason) || !strings.HasPrefix(d[0].String(), "stamp: stamping is unavailable in this run: "+tc.reason) {
			t.Errorf("%s: Degraded %+v", tc.name, d)
			continue
		}
		if out, isErr := call(t, r, tiers.Normal, "stamp", `{}`); !isErr || out != "cannot stamp: "+d[0].Reason {
			t.Errorf("%s: stamp: (error=%v) %q", tc.name, isErr, out)
		}
		c := runtest.Client(t, r, tiers.Normal)
		init, err := c.Initialize(context.Background(), mcp.InitializeRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(init.Instructions, "\n"+d[0].String()+".") {
			t.Errorf("%s: the instructions do not say it: %q", tc.name, init.Instructions)
		}
	}
}

// What a use declares is checked when the run opens: a tool that is not
// the family's, a used family whose resource has another type (a rename of
// its type), two providers of one service.
func TestRequirementsCheckedAtNewRun(t *testing.T) {
	wrongTool := registry.Family[registry.None]{Key: registry.NewKey[registry.None]("desk"), Tools: []registry.Descriptor{stampTool},
		Requires: []registry.Requirement{registry.RequiresService[stamper]("stamping", "stomp")}}
	otherInk := registry.Family[registry.None]{Key: registry.NewKey[registry.None]("ink")}
	typed := registry.Family[registry.None]{Key: registry.NewKey[registry.None]("desk"), Tools: []registry.Descriptor{stampTool},
		Requires: []registry.Requirement{registry.Requires(inkKey, "stamping", "stamp")}}
	blue := registry.Family[*inkpad]{Key: registry.NewKey[*inkpad]("blue"), Open: func(*registry.Env) (*inkpad, error) { return &inkpad{"blue"}, nil },
		Provides: []registry.Provision[*inkpad]{registry.Provide(func(p *inkpad) stamper { return p })}}
	for _, tc := range []struct {
		families []registry.Extension
		without  []string
		want     string
	}{
		{[]registry.Extension{wrongTool, red}, nil, "family desk declares that its tool stomp uses a registry_test.stamper, but it has no tool stomp"},
		{[]registry.Extension{typed, otherInk}, nil, "family desk uses the ink family's resource as a *registry_test.inkpad, but that resource is a registry.None"},
		{[]registry.Extension{desk, red, blue}, nil, "families ink and blue both provide a registry_test.stamper"},
	} {
		_, err := registry.NewRun(registry.Config{Root: t.TempDir(), Families: tc.families, Without: tc.without})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", familyNamesOf(tc.families), err, tc.want)
		}
	}
	// Two providers, one left out: the run takes the other.
	r := newRun(t, registry.Config{Families: []registry.Extension{desk, red, blue}, Without: []string{"ink"}})
	if out, _ := call(t, r, tiers.Normal, "stamp", `{}`); out != "stamped in blue" {
		t.Errorf("with blue only: %q", out)
	}
	// A family's resource by its key.
	r = newRun(t, registry.Config{Families: []registry.Extension{typed, red}})
	if p, ok := registry.Requires(inkKey, "x").Of(r); ok || p != nil {
		t.Error("a use no family declared found the resource")
	}
}

func familyNamesOf(fs []registry.Extension) string {
	var names []string
	for _, f := range fs {
		names = append(names, f.Name())
	}
	return strings.Join(names, ",")
}

type hookParams struct {
	Op string `json:"op" jsonschema:"what to do"`
}

var decodes atomic.Int32

// UnmarshalJSON counts the decodes of a call's arguments.
func (p *hookParams) UnmarshalJSON(b []byte) error {
	decodes.Add(1)
	type plain hookParams
	return json.Unmarshal(b, (*plain)(p))
}

// The approval hook gets the arguments decoded into the handler's own
// params, once per call (the handler gets the same value), never for an
// escalation (whose card is what the escalation names), and a call whose
// arguments do not decode fails before anyone is asked.
func TestApproveHookIsTyped(t *testing.T) {
	var asked, hooked []string
	approver := approverFunc(func(ctx context.Context, c *registry.Call) (bool, string, error) {
		asked = append(asked, string(c.Tool.Tier)+": "+c.ApprovalSummary())
		return true, "", nil
	})
	tool := registry.Descriptor{Name: "act", Tier: tiers.Write, Description: "acts",
		Handler: registry.Func(func(ctx context.Context, c *registry.Call, p hookParams) (msg, error) {
			if p.Op == "hook" {
				if err := c.EscalateCard(ctx, tiers.Exec, ".git/hooks/pre-commit", "the hook's diff"); err != nil {
					return msg{}, err
				}
			}
			return msg{"did " + p.Op}, nil
		}, registry.Approve(func(ctx context.Context, c *registry.Call, _ registry.None, p hookParams) (bool, string) {
			hooked = append(hooked, p.Op)
			return p.Op != "nothing", "about " + p.Op
		}))}
	r := newRun(t, registry.Config{Families: []registry.Extension{family("acts", tool)}, Approver: approver,
		Policy: registry.Policy{tiers.Write: registry.Ask, tiers.Exec: registry.Ask}})
	decodes.Store(0)
	for _, op := range []string{"nothing", "write", "hook"} {
		if out, isErr := call(t, r, tiers.Normal, "act", `{"op":"`+op+`"}`); isErr || out != "did "+op {
			t.Fatalf("%s: (error=%v) %q", op, isErr, out)
		}
	}
	if n := decodes.Load(); n != 3 {
		t.Errorf("3 calls decoded their arguments %d times, want once each", n)
	}
	if strings.Join(hooked, ",") != "nothing,write,hook" || strings.Join(asked, "|") != "write: about write|write: about hook|exec: the hook's diff" {
		t.Errorf("hook saw %q, the operator was asked %q", hooked, asked)
	}
	// 2^70 fits the schema's integer but not an int: refused before the card.
	type countParams struct {
		N int `json:"n" jsonschema:"how many"`
	}
	asked = nil
	big := registry.Descriptor{Name: "big", Tier: tiers.Write, Description: "counts",
		Handler: registry.Func(func(ctx context.Context, c *registry.Call, p countParams) (msg, error) { return msg{"ran"}, nil },
			registry.Approve(func(ctx context.Context, c *registry.Call, _ registry.None, p countParams) (bool, string) {
				return true, ""
			}))}
	r = newRun(t, registry.Config{Families: []registry.Extension{family("big", big)}, Approver: approver,
		Policy: registry.Policy{tiers.Write: registry.Ask}})
	if out, isErr := call(t, r, tiers.Normal, "big", `{"n":1180591620717411303424}`); !isErr || !strings.Contains(out, "arguments for big do not fit its schema") || len(asked) != 0 {
		t.Errorf("undecodable arguments: (error=%v) %q, asked %q", isErr, out, asked)
	}
}

// A serial tool's Interrupts hook, given the typed params, lets a call
// past the one running.
func TestInterruptsHookIsTyped(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	tool := registry.Descriptor{Name: "run", Tier: tiers.Read, Description: "runs", Serial: true,
		Handler: registry.Func(func(ctx context.Context, c *registry.Call, p hookParams) (msg, error) {
			if p.Op == "go" {
				close(started)
				<-release
			}
			return msg{"did " + p.Op}, nil
		}, registry.Interrupts(func(_ registry.None, p hookParams) bool { return p.Op == "pause" }))}
	r := newRun(t, registry.Config{Families: []registry.Extension{family("runs", tool)}})
	done := make(chan string, 1)
	go func() {
		res, _ := r.Call(context.Background(), tiers.Normal, "run", json.RawMessage(`{"op":"go"}`))
		done <- registry.ResultText(res)
	}()
	<-started
	if out, isErr := call(t, r, tiers.Normal, "run", `{"op":"pause"}`); isErr || out != "did pause" {
		t.Errorf("pause while go runs: (error=%v) %q", isErr, out)
	}
	close(release)
	if out := <-done; out != "did go" {
		t.Errorf("go: %q", out)
	}
}
