package graph

// Located is a definition a Spec names, with the byte range of its node
// and of its name as the index last read its file, for a tool that edits
// it (which checks them against the bytes it reads).
type Located struct {
	Symbol
	Start, End int      // the whole definition, as tags.scm captures it
	NameAt     int      // the name's first byte
	Hash       [32]byte // SHA-256 of the file's bytes these ranges are in
}

// Locate is the lookup callers and callees use: the definitions a spec
// names, best first (more than one: the spec is ambiguous), or a
// *LookupError that says what to try (near names, the line's text).
func Locate(v View, s Spec) ([]Located, error) {
	ts, err := v.locate(s)
	if err != nil {
		return nil, err
	}
	out := make([]Located, len(ts))
	for i, t := range ts {
		d := t.D()
		out[i] = Located{Symbol: symbolOf(t), Start: int(d.Start), End: int(d.End), NameAt: int(d.NameAt), Hash: t.File.Content}
	}
	return out, nil
}

// TagOnly is the //go:build line of the indexed Go file rel when no GOOS
// and GOARCH satisfy it: it needs a tag of its own (integration,
// hardening). A type checker loading the module for some system, as gopls
// does for a file of another GOOS, has no package for it unless given the
// tag. "" for any other file.
func TagOnly(v View, rel string) string {
	f := v.Snap.Entry(rel)
	if f == nil {
		return ""
	}
	return f.Lang.TagOnly(f.BuildLine)
}
