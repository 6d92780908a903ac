package lang

import (
	"go/build/constraint"
	"path"
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

// Variant is a file's system and architecture from its name ("" for any).
type Variant struct{ os, arch string }

func goVariant(rel string) Variant {
	stem := strings.TrimSuffix(path.Base(rel), ".go")
	stem = strings.TrimSuffix(stem, "_test")
	parts := strings.Split(stem, "_")
	n := len(parts)
	if n < 2 {
		return Variant{}
	}
	last := parts[n-1]
	switch {
	case goArch[last] && n >= 3 && goOS[parts[n-2]]:
		return Variant{os: parts[n-2], arch: last}
	case goArch[last]:
		return Variant{arch: last}
	case goOS[last]:
		return Variant{os: last}
	}
	return Variant{}
}

// Compatible says whether two variants can be built together.
func (a Variant) Compatible(b Variant) bool {
	return (a.os == "" || b.os == "" || a.os == b.os) && (a.arch == "" || b.arch == "" || a.arch == b.arch)
}

// Any says the variant is built for every system.
func (v Variant) Any() bool { return v.os == "" && v.arch == "" }

// Host is the variant this process runs as.
var Host = Variant{os: runtime.GOOS, arch: runtime.GOARCH}

// Variant is the variant a file's path names by the language's variants
// rule (the empty one for any system).
func (l *Language) Variant(rel string) Variant {
	if l.Variants == "go" {
		return goVariant(rel)
	}
	return Variant{}
}

// What a file says of the system it is built for (HostOf).
const (
	HostAny uint8 = iota
	HostYes
	HostNo
)

// unixOS are the systems Go's "unix" build tag names.
var unixOS = setOf("aix android darwin dragonfly freebsd hurd illumos ios linux netbsd openbsd solaris")

// HostOf reads a file's build line (Record.BuildLine, Go's //go:build)
// against this system: its GOOS and GOARCH, unix, gc, cgo and every go1.N
// release tag hold; any other tag does not.
func (l *Language) HostOf(t string) uint8 {
	if l.Variants != "go" || t == "" {
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

// TagOnly is a file's build line (Record.BuildLine) when no GOOS and
// GOARCH satisfy it: it needs a tag of its own (integration, hardening). A
// type checker loading the module for some system, as gopls does for a
// file of another GOOS, has no package for it unless given the tag. ""
// for any other line, and in a language without the go variants rule.
func (l *Language) TagOnly(t string) string {
	if l.Variants != "go" || t == "" || l.HostOf(t) != HostNo {
		return ""
	}
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
