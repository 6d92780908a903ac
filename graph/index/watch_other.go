//go:build !linux

package index

import "errors"

// watcher is Linux-only; elsewhere every query checks every file's stamp.
type watcher struct{}

func newWatcher() (*watcher, error) { return nil, errors.New("no file watching on this system") }

func (w *watcher) add(rel, abs string) error                { return errors.New("unsupported") }
func (w *watcher) drain() (files, dirs []string, lost bool) { return nil, nil, true }
func (w *watcher) close()                                   {}
