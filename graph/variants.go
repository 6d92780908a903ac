package graph

import (
	"bytes"
	"go/build/constraint"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// Build variants: Go compiles a file named x_linux.go, x_amd64.go or
// x_linux_amd64.go only for that system or architecture, so a package may
// define one name once per variant. A call from a file of one variant can
// only reach the definition of the same variant (or of none); the others
// are not in scope. Languages turn this on with "variants": "go".

var (
	goOS   = setOf("aix android darwin dragonfly freebsd hurd illumos ios js linux nacl netbsd openbsd plan9 solaris wasip1 windows zos")
	goArch = setOf("386 amd64 amd64p32 arm arm64 arm64be armbe loong64 mips mipsle mips64 mips64le mips64p32 mips64p32le ppc ppc64 ppc64le riscv riscv64 s390 s390x sparc sparc64 wasm")
)

func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// variant is a file's system and architecture from its name ("" for any).
type variant struct{ os, arch string }

func goVariant(rel string) variant {
	stem := strings.TrimSuffix(path.Base(rel), ".go")
	stem = strings.TrimSuffix(stem, "_test")
	parts := strings.Split(stem, "_")
	n := len(parts)
	if n < 2 {
		return variant{}
	}
	last := parts[n-1]
	switch {
	case goArch[last] && n >= 3 && goOS[parts[n-2]]:
		return variant{os: parts[n-2], arch: last}
	case goArch[last]:
		return variant{arch: last}
	case goOS[last]:
		return variant{os: last}
	}
	return variant{}
}

// compatible says whether two variants can be built together.
func (a variant) compatible(b variant) bool {
	return (a.os == "" || b.os == "" || a.os == b.os) && (a.arch == "" || b.arch == "" || a.arch == b.arch)
}

func (v variant) any() bool { return v.os == "" && v.arch == "" }

// host is the variant this process runs as.
var host = variant{os: runtime.GOOS, arch: runtime.GOARCH}

func (l *Language) variant(rel string) variant {
	if l.Variants == "go" {
		return goVariant(rel)
	}
	return variant{}
}

// inVariant keeps the definitions a file of f's variant can reach, when
// there are several and some are built for other variants.
func inVariant(f *File, ts []Target) []Target {
	if len(ts) < 2 || f.Lang.Variants == "" {
		return ts
	}
	mine := f.Lang.variant(f.Rel)
	out := ts[:0:0]
	for _, t := range ts {
		if mine.compatible(t.File.Lang.variant(t.File.Rel)) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return ts
	}
	return out
}

// What a file says of the system it is built for (File.Host).
const (
	HostAny uint8 = iota
	HostYes
	HostNo
)

// unixOS are the systems Go's "unix" build tag names.
var unixOS = setOf("aix android darwin dragonfly freebsd hurd illumos ios linux netbsd openbsd solaris")

// hostBuilt reads a Go file's //go:build line (before its package clause)
// against this system: its GOOS and GOARCH, unix, gc, cgo and every go1.N
// release tag hold; any other tag does not.
func (l *Language) hostBuilt(src []byte) uint8 {
	if l.Variants != "go" {
		return HostAny
	}
	t := goBuildLine(src)
	if t == "" {
		return HostAny
	}
	e, err := constraint.Parse(t)
	if err != nil {
		return HostAny
	}
	if e.Eval(hostTag) {
		return HostYes
	}
	return HostNo
}

// goBuildLine is a Go file's //go:build line (before its package clause),
// or "".
func goBuildLine(src []byte) string {
	for len(src) > 0 {
		line := src
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i], src[i+1:]
		} else {
			src = nil
		}
		t := strings.TrimSpace(string(line))
		switch {
		case t == "" || strings.HasPrefix(t, "//") && !constraint.IsGoBuild(t):
			continue
		case constraint.IsGoBuild(t):
			return t
		}
		return "" // the package clause, or a block comment: no constraint read
	}
	return ""
}

// TagOnly is the //go:build line of the indexed Go file rel when no GOOS
// and GOARCH satisfy it: it needs a tag of its own (integration,
// hardening). A type checker loading the module for some system, as gopls
// does for a file of another GOOS, has no package for it unless given the
// tag. "" for any other file.
func (x *Index) TagOnly(rel string) string {
	x.mu.RLock()
	f := x.files[rel]
	x.mu.RUnlock()
	if f == nil || f.Lang.Variants != "go" || f.Host != HostNo {
		return ""
	}
	data, _, err := x.guard.ReadFile(filepath.Join(x.root, filepath.FromSlash(rel)), x.opts.MaxFileSize)
	if err != nil {
		return ""
	}
	t := goBuildLine(data)
	e, err := constraint.Parse(t)
	if err != nil {
		return ""
	}
	for goos := range goOS {
		for arch := range goArch {
			if e.Eval(func(tag string) bool { return systemTag(tag, goos, arch) }) {
				return ""
			}
		}
	}
	return t
}

func hostTag(tag string) bool { return systemTag(tag, runtime.GOOS, runtime.GOARCH) }

// systemTag says whether tag holds when building for os and arch: the
// two, what they imply (unix; android is linux, ios darwin, illumos
// solaris), gc, cgo and every go1.N release tag.
func systemTag(tag, os, arch string) bool {
	switch {
	case tag == os, tag == arch, tag == "gc", tag == "cgo":
		return true
	case tag == "unix":
		return unixOS[os]
	case tag == "linux" && os == "android", tag == "darwin" && os == "ios", tag == "solaris" && os == "illumos":
		return true
	case strings.HasPrefix(tag, "go1."):
		return true
	}
	return false
}
