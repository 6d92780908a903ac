package askuser

import (
	"time"

	"github.com/builtin-tools/builtin-tools/registry"
)

// Key is the ask port's resource key.
var Key = registry.NewKey[*Asker]("ask")

// Config is the family's setting: the port questions go through and how
// long one may wait. A nil Port attaches nothing: ask_user is then absent
// and approvals that ask are refused (the gate fails closed).
type Config struct {
	Port    Port
	Timeout time.Duration
}

// Family is ask_user and the port behind approval prompts.
var Family = registry.Family[*Asker]{
	Key: Key,
	Doc: "ask_user: a question to the human, and the port approval prompts use",
	Open: registry.Configured(Key, func(env *registry.Env, cfg Config) (*Asker, error) {
		if cfg.Port == nil {
			return nil, registry.ErrSkip
		}
		return &Asker{Port: cfg.Port, Timeout: cfg.Timeout}, nil
	}),
	Tools: []registry.Descriptor{AskTool},
}
