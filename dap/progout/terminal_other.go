//go:build !linux

package progout

import (
	"errors"
	"time"
)

// Terminal is made only on Linux; elsewhere the adapter relays the
// program's output.
type Terminal struct{ Path string }

// NewTerminal says there is none here.
func NewTerminal() (*Terminal, error) {
	return nil, errors.New("the session makes no terminal on this system")
}

func (t *Terminal) Start(*Buffer)         {}
func (t *Terminal) Drain(d time.Duration) {}
func (t *Terminal) Close()                {}
