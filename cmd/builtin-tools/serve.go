package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/lifetime"
	"github.com/builtin-tools/builtin-tools/registry"
)

func cmdServe(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var c common
	fs := flagSet("serve", "serve [flags]\n\nServes one run over stdin/stdout to the MCP client that started this process.", stderr)
	c.register(fs, "elicit")
	fs.IntVar(&c.maxFrame, "max-frame", registry.DefaultMaxFrameBytes, "largest message read from the client, in bytes; a longer one is answered with an error")
	r, mode, code := c.openRun(fs, args, stdin, stdout, stderr)
	if r == nil {
		return code
	}
	// Closing is bounded too: exit does not wait on a resource that hangs
	// (children are killed by internal/proc even then).
	defer closeWithin(r, 10*time.Second)
	// What a --without or a missing option costs other families' tools,
	// for the log of whoever started us (the client's instructions say it
	// too).
	for _, d := range r.Degraded() {
		fmt.Fprintf(stderr, "builtin-tools serve: %s\n", d)
	}
	ctx, cancel := signalContext()
	defer cancel()
	if err := r.ServeStdio(ctx, mode, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "builtin-tools serve: %v\n", err)
		return 1
	}
	return 0
}

func closeWithin(r *registry.Run, d time.Duration) {
	done := make(chan struct{})
	go func() { r.Close(); close(done) }()
	lifetime.Await(context.Background(), done, d)
}
