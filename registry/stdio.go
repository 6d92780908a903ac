package registry

import (
	"context"
	"io"

	"github.com/builtin-tools/builtin-tools/registry/stdiosession"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// DefaultMaxFrameBytes bounds one JSON-RPC message read by ServeStdio
// when Config.MaxFrameBytes does not.
const DefaultMaxFrameBytes = 16 << 20

// ServeStdio serves the run's peer for mode over in and out until in ends or
// ctx is cancelled. The client on the other end is the only peer of this
// connection: it has a session of its own (requests to it, notifications,
// answers), apart from any other connection of the process (R2).
//
// Every line of input passes rpcline's filter first: a line over
// Config.MaxFrameBytes is answered with an error and skipped with bounded
// memory; a line that is not UTF-8, or whose id is not a string, a number
// or null, is answered with an error; a request other than initialize and
// ping before initialize is refused. When the input ends, the requests
// already read get 3 s to be answered, then are cancelled, and
// ServeStdio returns at most a second later (stdiosession's Session.Serve).
func (r *Run) ServeStdio(ctx context.Context, mode tiers.Mode, in io.Reader, out io.Writer) error {
	return r.serveStdio(ctx, mode, in, stdiosession.New(out))
}

func (r *Run) serveStdio(ctx context.Context, mode tiers.Mode, in io.Reader, sess *stdiosession.Session) error {
	s, err := r.Server(mode)
	if err != nil {
		return err
	}
	limit := r.cfg.MaxFrameBytes
	if limit <= 0 {
		limit = DefaultMaxFrameBytes
	}
	return sess.Serve(ctx, s, in, limit, func(name string) string {
		if _, inCatalog := r.table.tools[name]; inCatalog {
			return "" // the call path refuses it if the caller cannot see it
		}
		return r.table.refusal(mode, name)
	})
}
