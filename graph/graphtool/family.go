// Package graphtool puts the code graph (package graph) on a run's tool
// surface: the read-tier code_graph tool, whose text package
// graph/answertext writes from the engine's answers, and the wrapper that re-reads every file a
// write tool changed before the next query sees the index (GRAPH-2's
// read-your-writes).
package graphtool

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/mark3labs/mcp-go/mcp"
)

// Graph is the run's reference to the process's index of its root.
type Graph struct {
	H *graph.Handle
	// Wait bounds how long a query waits for a build in progress before it
	// answers from what is indexed so far.
	Wait time.Duration
	// ConfirmSites and ConfirmTime bound confirm (defaults 200 sites and
	// 10 s).
	ConfirmSites int
	ConfirmTime  time.Duration

	announce sync.Once
}

// announceWhenReady tells the run's peers, once, when a build that has
// given partial answers finishes, so a client can ask again. The wait ends
// with the run.
func (g *Graph) announceWhenReady(run *registry.Run) {
	g.announce.Do(func() {
		x := g.H.Index()
		go func() {
			ctx := run.Context()
			for !x.Wait(ctx, time.Hour) {
				if ctx.Err() != nil {
					return
				}
			}
			_, total := x.Progress()
			run.Log(mcp.LoggingLevelInfo, "code_graph", fmt.Sprintf("code graph ready: %d files indexed; answers given while it was building were partial, ask again for complete ones", total))
		}()
	})
}

// Close gives the run's reference back.
func (g *Graph) Close() error {
	g.H.Release()
	return nil
}

// Config configures the family: the index's options, how long a query
// waits for a build (default 5 s), and confirm's bounds: sites asked
// (default 200) and time from the first request (default 10 s).
// Options.StoreDir is the graph store (the serve command's --graph-cache,
// store.DefaultDir by default, shared by every root, worktree and worker
// of the user; "" keeps records in memory only) and Options.StoreBytes
// its bound on disk (--graph-cache-size, default 1 GiB).
type Config struct {
	graph.Options
	Wait         time.Duration
	ConfirmSites int
	ConfirmTime  time.Duration
}

// Key is the code graph's resource key.
var Key = registry.NewKey[*Graph]("code_graph")

// Family is code_graph and the re-index after writes.
var Family = registry.Family[*Graph]{
	Key: Key,
	Doc: "code_graph: a tree-sitter index of definitions, references and call edges, each edge saying how it was resolved",
	Open: registry.Configured(Key, func(env *registry.Env, cfg Config) (*Graph, error) {
		h, err := graph.Acquire(env.Guard, cfg.Options)
		if err != nil {
			return nil, err
		}
		if cfg.Wait <= 0 {
			cfg.Wait = 5 * time.Second
		}
		if cfg.ConfirmSites <= 0 {
			cfg.ConfirmSites = confirmMaxSites
		}
		if cfg.ConfirmTime <= 0 {
			cfg.ConfirmTime = confirmMaxTime
		}
		return &Graph{H: h, Wait: cfg.Wait, ConfirmSites: cfg.ConfirmSites, ConfirmTime: cfg.ConfirmTime}, nil
	}),
	Tools:    []registry.Descriptor{Tool},
	Wrappers: []registry.Wrapper{ReindexOnWrite},
	Requires: []registry.Requirement{servers},
	// A write's check finds the files using what it changed here.
	Provides: []registry.Provision[*Graph]{registry.Provide(func(g *Graph) lsp.Dependents { return g })},
}

// ReindexOnWrite re-reads the files a write tool changed, before its
// result returns, so the next code_graph query answers from them.
var ReindexOnWrite = registry.Wrapper{
	Name:    "code-graph-on-write",
	Applies: registry.WritesFiles,
	Wrap: func(next registry.HandlerFunc) registry.HandlerFunc {
		return func(ctx context.Context, c *registry.Call) (*mcp.CallToolResult, error) {
			res, err := next(ctx, c)
			g, ok := Key.Of(c.Run)
			if !ok || !g.H.Index().Started() {
				return res, err
			}
			if written := c.Written(); len(written) > 0 {
				if rerr := g.H.Index().Refresh(ctx, written...); rerr != nil && res != nil && !res.IsError {
					c.Report("code_graph", "code graph: re-reading the written files failed: "+rerr.Error(), map[string]any{"error": rerr.Error()})
				}
			}
			return res, err
		}
	},
}

// dependentsWait bounds how long a write's check waits for a build of the
// index it started or found under way.
const dependentsWait = 3 * time.Second

// Dependents names the files using the definitions a write removed,
// renamed or gave another signature (lsp.Dependents, for the lsp family's
// check of other files). A build not yet begun is started; one under way
// is waited for a little, and what it has indexed by then is used.
func (g *Graph) Dependents(ctx context.Context, rel string, before, after []byte, max int) (changed, files []string, more int, err error) {
	x := g.H.Index()
	x.Start(nil)
	if !x.Ready() {
		wctx, cancel := context.WithTimeout(ctx, dependentsWait)
		x.Wait(wctx, dependentsWait)
		cancel()
	}
	d, err := g.H.Dependents(ctx, rel, before, after, max)
	return d.Changed, d.Files, d.More, err
}
