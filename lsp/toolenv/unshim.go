package toolenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/builtin-tools/builtin-tools/internal/proc"
	"github.com/builtin-tools/builtin-tools/lsp/broker/untrusted"
)

// Unshim replaces a Volta shim by the program it runs outside the checkout
// (untrusted only): in a checkout whose package.json lists the tool, the
// shim would run the checkout's own node_modules/.bin copy.
func (e *Env) Unshim(bin string) (string, error) {
	if e.trusted {
		return bin, nil
	}
	if filepath.Dir(bin) != voltaDir() {
		// PATH may lead inside the root: the rule refuses what lies
		// there (the run's root, which holds every server's).
		return bin, untrusted.CheckProgram(bin, e.root, os.Environ())
	}
	p := e.pins()
	if p.voltaBin == "" || filepath.Dir(bin) != p.voltaBin {
		return bin, nil
	}
	name := filepath.Base(bin)
	e.unshimMu.Lock()
	defer e.unshimMu.Unlock()
	if r, ok := e.unshimmed[name]; ok {
		return r.bin, r.err
	}
	resolved, err := e.voltaWhich(p.voltaBin, name)
	if err == nil {
		err = untrusted.CheckProgram(resolved, e.root, os.Environ())
	}
	if e.unshimmed == nil {
		e.unshimmed = map[string]unshimmed{}
	}
	e.unshimmed[name] = unshimmed{resolved, err}
	return resolved, err
}

type unshimmed struct {
	bin string
	err error
}

func (e *Env) voltaWhich(voltaBin, name string) (string, error) {
	volta := filepath.Join(voltaBin, "volta")
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	cmd := exec.Command(volta, "which", name)
	cmd.Dir = proc.NeutralDir
	cmd.Env = e.Child("")
	out, err := proc.Output(ctx, cmd)
	resolved := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	if err == nil && (!filepath.IsAbs(resolved) || !isFile(resolved)) {
		err = errors.New("it named no program")
	}
	if err != nil {
		if why := proc.ExplainingLine(string(out)); why != "" && resolved == "" {
			err = fmt.Errorf("%s (%v)", why, err)
		}
		return "", fmt.Errorf("%s is a Volta shim, which in this checkout could run the checkout's own copy, and `volta which %s` found none outside it: %v; "+
			"install it with volta install %s, or trust the checkout", name, name, err, name)
	}
	return resolved, nil
}

func isFile(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular()
}
