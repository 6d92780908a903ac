//go:build !linux

package ondisk

import "errors"

// Watcher is Linux-only; elsewhere every query checks every file's stamp.
type Watcher struct{}

func NewWatcher() (*Watcher, error) { return nil, errors.New("no file watching on this system") }

func (w *Watcher) Add(rel, abs string) error                { return errors.New("unsupported") }
func (w *Watcher) Drain() (files, dirs []string, lost bool) { return nil, nil, true }
func (w *Watcher) Close()                                   {}
