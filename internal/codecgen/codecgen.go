// Package codecgen writes a binary codec for plain Go record types, read
// from the types themselves, so no save and load keep a field order by
// hand and no format magic is bumped: Generate reflects over a record type
// and everything it reaches, and emits, for each root type,
//
//	func (v *T) AppendBinary(b []byte) ([]byte, error)
//	func (v *T) UnmarshalBinary(data []byte) error
//	func (v *T) Validate() error
//
// and one constant, SchemaHash: the SHA-256 of the types' description
// (every field's name, type, tag and place) and of the emitted code, so any
// change to a field, a type, the order or the encoding rules changes it. A
// cache keys its entries with it, and an old entry is never read as a new
// one.
//
// It is for the code graph's per-file records (graph/record) and the store's
// manifests (graph/store): flat structs of scalars, strings, slices, byte
// arrays, nested structs and named integer types that index a table of the
// record. An embedded struct is encoded as its fields written in its place,
// so a record can keep a group of fields and their methods in a type of
// their own without changing its encoding. It is not a general serializer: no maps (their order is not
// stable), pointers, interfaces or recursive types — a tree is a table
// with indexes, which is also what keeps records free of pointers for the
// garbage collector.
//
// The encoding, field by field in declaration order: bool, int8 and uint8
// as one byte; wider integers as varints (signed ones zigzagged); floats
// as their IEEE bits, little endian; strings, byte slices and slices as a
// uvarint length and the elements; arrays as their elements. A field
// tagged `codec:"delta"` inside a slice's element (or a slice of integers
// so tagged) is written as the difference from the previous element,
// which makes sorted positions one or two bytes each.
//
// Decoding never panics and never allocates more than a bounded multiple
// of the input's size: every count is checked against the bytes left
// before anything is made (a slice of n elements needs at least n times
// its element's smallest encoding), every integer against its type's
// range, and UnmarshalBinary fails on trailing bytes. What the decoder
// cannot know — that an index points into its table — Validate checks,
// from tags:
//
//	index=Path   the value is an index of the slice or string at Path
//	bound=Path   the value is at most len(Path) (an end offset)
//	none=-1      this value is allowed besides (a "none" sentinel)
//	len=Field    with index: Value+Field ≤ len(Path) (a span of a table)
//	sorted       a slice of integers is in non-decreasing order
//	delta        the encoding above
//	-            the field is not encoded
//
// Path is a dotted path of fields from the root type ("Strs.Ends"), or
// from the struct holding the field when it starts with a dot (".Data").
// Config.Tables gives every field of a named integer type a tag (Str
// indexes the string table wherever it is used), and Config.Checks names
// a method the generated Validate calls last, for invariants no tag says.
//
// A package keeps its generated file current with a test that calls
// UpToDate, which compares the file with what Generate gives and rewrites
// it under -update (see toyrecord's TestCodecUpToDate). If a type change leaves the old file
// unable to compile, replace it with its package clause and run that test
// with -update; tests that reach the codec through interfaces
// (encoding.BinaryAppender, encoding.BinaryUnmarshaler) still compile.
//
// At run time the generated code needs only package wire (the decoder,
// appends, slice loops and Validate's error every generated file
// shares), not this one. Why not
// encoding/gob: gob sends its type description and compiles its decoder
// per stream, about 130 µs per record, and a content-addressed store keeps
// one stream per record (see internal/codecgen/toyrecord's benchmarks).
package codecgen

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"go/format"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/builtin-tools/builtin-tools/internal/codecgen/wire"
)

// wirePath is the import path of the run-time package generated files use.
var wirePath = reflect.TypeFor[wire.Decoder]().PkgPath()

// wireSource is that package's code, which SchemaHash covers with the
// generated code: the encoding is in both.
//
//go:embed wire/*.go
var wireSource embed.FS

// Config says what Generate writes.
type Config struct {
	// Package is the generated file's package name.
	Package string
	// Roots holds a value of each root type (e.g. Record{}); they must be
	// named struct types of one package, the generated file's.
	Roots []any
	// Tables gives every field of a named integer type a tag.
	Tables []Table
	// Checks maps a root type's name to a method of it, `func (*T)
	// name() error` (it may be unexported), that the generated Validate
	// calls after its own checks.
	Checks map[string]string
	// Hash names the emitted schema hash constant; "" is SchemaHash.
	Hash string
	// Header is a comment placed above the package clause (after the
	// "Code generated" line), e.g. how to regenerate.
	Header string
}

// Table gives every field of one named integer type the tag Tag, e.g.
// {Str(0), "index=Strs.Ends"}. A field's own tag adds to it.
type Table struct {
	Type any
	Tag  string
}

type kind int

const (
	kBool kind = iota
	kByte      // uint8, int8: one byte
	kUint      // uint16..uint64, uint: uvarint
	kInt       // int16..int64, int: zigzag varint
	kF32
	kF64
	kString
	kBytes // []byte
	kArray
	kSlice
	kStruct
)

type node struct {
	t      reflect.Type
	k      kind
	elem   *node
	fields []*field // kStruct
	min    int      // smallest encoding in bytes
	delta  bool     // kStruct: a field (or a nested one) is delta-coded
	tag    tag      // kUint/kInt named types: from Config.Tables
}

type field struct {
	name string
	n    *node
	tag  tag
}

type tag struct {
	skip   bool
	index  string
	bound  string
	none   *int64
	length string
	sorted bool
	delta  bool
}

func (t tag) String() string {
	var p []string
	if t.skip {
		p = append(p, "-")
	}
	if t.index != "" {
		p = append(p, "index="+t.index)
	}
	if t.bound != "" {
		p = append(p, "bound="+t.bound)
	}
	if t.none != nil {
		p = append(p, "none="+strconv.FormatInt(*t.none, 10))
	}
	if t.length != "" {
		p = append(p, "len="+t.length)
	}
	if t.sorted {
		p = append(p, "sorted")
	}
	if t.delta {
		p = append(p, "delta")
	}
	return strings.Join(p, ",")
}

func parseTag(s string) (tag, error) {
	var t tag
	if s == "" {
		return t, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, has := strings.Cut(strings.TrimSpace(part), "=")
		switch {
		case k == "-" && !has:
			t.skip = true
		case k == "index" && v != "":
			t.index = v
		case k == "bound" && v != "":
			t.bound = v
		case k == "len" && v != "":
			t.length = v
		case k == "none" && has:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return t, fmt.Errorf("tag %q: none=%s is not an integer", s, v)
			}
			t.none = &n
		case k == "sorted" && !has:
			t.sorted = true
		case k == "delta" && !has:
			t.delta = true
		default:
			return t, fmt.Errorf("tag %q: unknown part %q (want index=, bound=, len=, none=, sorted, delta or -)", s, part)
		}
	}
	if t.index != "" && t.bound != "" {
		return t, fmt.Errorf("tag %q: index and bound together", s)
	}
	if (t.none != nil || t.length != "") && t.index == "" && t.bound == "" {
		return t, fmt.Errorf("tag %q: none= and len= need index= or bound=", s)
	}
	return t, nil
}

// merge adds a field's own tag to its type's.
func (t tag) merge(o tag) tag {
	if o.skip {
		t.skip = true
	}
	if o.index != "" {
		t.index, t.bound = o.index, ""
	}
	if o.bound != "" {
		t.bound, t.index = o.bound, ""
	}
	if o.none != nil {
		t.none = o.none
	}
	if o.length != "" {
		t.length = o.length
	}
	t.sorted = t.sorted || o.sorted
	t.delta = t.delta || o.delta
	return t
}

func (t tag) checks() bool { return t.index != "" || t.bound != "" || t.sorted }

type gen struct {
	cfg     Config
	pkgPath string
	tables  map[reflect.Type]tag
	nodes   map[reflect.Type]*node
	active  map[reflect.Type]bool
	structs []*node // named structs in first-seen order: one append and one decode function each
	imports map[string]string
	desc    bytes.Buffer
	out     bytes.Buffer
	fnNames map[reflect.Type]string
}

// Generate returns the formatted Go source of the codec for cfg.Roots.
func Generate(cfg Config) ([]byte, error) {
	if cfg.Package == "" || len(cfg.Roots) == 0 {
		return nil, fmt.Errorf("codecgen: a package name and at least one root type are needed")
	}
	if cfg.Hash == "" {
		cfg.Hash = "SchemaHash"
	}
	g := &gen{cfg: cfg, tables: map[reflect.Type]tag{}, nodes: map[reflect.Type]*node{},
		active: map[reflect.Type]bool{}, imports: map[string]string{}, fnNames: map[reflect.Type]string{}}
	for _, tb := range cfg.Tables {
		t := reflect.TypeOf(tb.Type)
		if t == nil || t.Name() == "" || !isInt(t.Kind()) {
			return nil, fmt.Errorf("codecgen: table type %v is not a named integer type", t)
		}
		tg, err := parseTag(tb.Tag)
		if err != nil {
			return nil, fmt.Errorf("codecgen: table %v: %w", t, err)
		}
		g.tables[t] = tg
	}
	var roots []*node
	for _, r := range cfg.Roots {
		t := reflect.TypeOf(r)
		if t == nil || t.Kind() != reflect.Struct || t.Name() == "" {
			return nil, fmt.Errorf("codecgen: root %v is not a named struct type", t)
		}
		if g.pkgPath == "" {
			g.pkgPath = t.PkgPath()
		} else if t.PkgPath() != g.pkgPath {
			return nil, fmt.Errorf("codecgen: roots %v and %s are in different packages", t, g.pkgPath)
		}
		n, err := g.node(t, t.Name())
		if err != nil {
			return nil, fmt.Errorf("codecgen: %w", err)
		}
		roots = append(roots, n)
	}
	for _, r := range roots {
		if err := g.checkPaths(r, r, r.t.Name()); err != nil {
			return nil, fmt.Errorf("codecgen: %w", err)
		}
	}
	for name := range cfg.Checks {
		if !slices.ContainsFunc(roots, func(r *node) bool { return r.t.Name() == name }) {
			return nil, fmt.Errorf("codecgen: Checks names %s, which is not a root", name)
		}
	}
	for _, r := range roots {
		g.describe(r, 0)
	}
	for _, n := range g.structs {
		g.emitAppend(n)
		g.emitDecode(n)
	}
	for _, r := range roots {
		g.emitRoot(r)
	}

	body := g.out.Bytes()
	sum := sha256.New()
	sum.Write(g.desc.Bytes())
	sum.Write(body)
	if err := hashWire(sum); err != nil {
		return nil, err
	}
	var file bytes.Buffer
	fmt.Fprintf(&file, "// Code generated by internal/codecgen from %s; DO NOT EDIT.\n", g.rootNames(roots))
	if cfg.Header != "" {
		for _, l := range strings.Split(strings.TrimRight(cfg.Header, "\n"), "\n") {
			fmt.Fprintf(&file, "// %s\n", l)
		}
	}
	fmt.Fprintf(&file, "\npackage %s\n\nimport (\n", cfg.Package)
	// The standard library first, then the module's: gofmt sorts within
	// a group.
	imports := map[string]string{wirePath: ""}
	for _, p := range []string{"encoding/binary", "fmt"} {
		if bytes.Contains(body, []byte(path.Base(p)+".")) {
			imports[p] = ""
		}
	}
	for p, name := range g.imports {
		// A type may be named only where the generic reads infer it.
		if bytes.Contains(body, []byte(name+".")) {
			imports[p] = name
		}
	}
	for _, std := range []bool{true, false} {
		for _, p := range slices.Sorted(maps.Keys(imports)) {
			if !strings.Contains(strings.Split(p, "/")[0], ".") == std {
				fmt.Fprintf(&file, "\t%s %q\n", imports[p], p)
			}
		}
		fmt.Fprintf(&file, "\n")
	}
	fmt.Fprintf(&file, ")\n\n// %s changes whenever a field, a type, their order or the encoding changes:\n", cfg.Hash)
	fmt.Fprintf(&file, "// the SHA-256 of the types' description and of this file's code.\nconst %s = %q\n\n", cfg.Hash, hex.EncodeToString(sum.Sum(nil)))
	file.Write(body)
	src, err := format.Source(file.Bytes())
	if err != nil {
		return file.Bytes(), fmt.Errorf("codecgen: the generated code does not parse (a bug): %w", err)
	}
	return src, nil
}

// hashWire adds package wire's code (not its tests) to the hash.
func hashWire(h io.Writer) error {
	files, err := fs.Glob(wireSource, "wire/*.go")
	if err != nil {
		return err
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := wireSource.ReadFile(f)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return nil
}

// UpToDate compares file with the code cfg generates and, when write is
// set, rewrites the file if it differs; otherwise a difference is an error
// that says how to regenerate (cfg.Header). A package's test calls it
// with its -update flag (see toyrecord's TestCodecUpToDate).
func UpToDate(cfg Config, file string, write bool) error {
	src, err := Generate(cfg)
	if err != nil {
		return err
	}
	old, _ := os.ReadFile(file)
	switch {
	case bytes.Equal(old, src):
		return nil
	case write:
		return os.WriteFile(file, src, 0o644)
	}
	return fmt.Errorf("%s is stale: %s", file, strings.ReplaceAll(strings.TrimSpace(cfg.Header), "\n", "; "))
}

func (g *gen) rootNames(roots []*node) string {
	var s []string
	for _, r := range roots {
		s = append(s, r.t.Name())
	}
	return strings.Join(s, ", ")
}

func isInt(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// structField is a field and the struct type it is declared in: the one
// being read, or a struct embedded in it.
type structField struct {
	reflect.StructField
	owner reflect.Type
}

// splice lists t's fields in order, an embedded struct's fields in its
// place. The generated code reaches them by promotion (v.X), so an
// embedded struct is encoded, checked and described exactly as if its
// fields were written where it is, and a tag's path names them as t's. A
// name met twice would be reached as the shallower one, so it is refused.
func splice(t reflect.Type) ([]structField, error) {
	var out []structField
	seen := map[string]string{}
	var walk func(t reflect.Type) error
	walk = func(s reflect.Type) error {
		for i := 0; i < s.NumField(); i++ {
			f := s.Field(i)
			if in, ok := seen[f.Name]; ok {
				return fmt.Errorf("%s.%s: %s has a field of that name too, inside %s", s.Name(), f.Name, in, t.Name())
			}
			seen[f.Name] = s.Name()
			if !f.Anonymous {
				out = append(out, structField{f, s})
				continue
			}
			if f.Type.Kind() != reflect.Struct {
				return fmt.Errorf("%s.%s: an embedded %v; only a struct is encoded in its place", s.Name(), f.Name, f.Type.Kind())
			}
			if tg := f.Tag.Get("codec"); tg == "-" {
				continue
			} else if tg != "" {
				return fmt.Errorf("%s.%s: an embedded struct takes no tag but -; tag its fields", s.Name(), f.Name)
			}
			if err := walk(f.Type); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(t)
}

// node reads t into the type model; at says where it was met, for errors.
func (g *gen) node(t reflect.Type, at string) (*node, error) {
	if n, ok := g.nodes[t]; ok {
		return n, nil
	}
	if g.active[t] {
		return nil, fmt.Errorf("%s: type %v contains itself; make the tree a table with indexes", at, t)
	}
	g.active[t] = true
	defer delete(g.active, t)
	n := &node{t: t, tag: g.tables[t]}
	switch t.Kind() {
	case reflect.Bool:
		n.k, n.min = kBool, 1
	case reflect.Int8, reflect.Uint8:
		n.k, n.min = kByte, 1
	case reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		n.k, n.min = kUint, 1
	case reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		n.k, n.min = kInt, 1
	case reflect.Float32:
		n.k, n.min = kF32, 4
	case reflect.Float64:
		n.k, n.min = kF64, 8
	case reflect.String:
		n.k, n.min = kString, 1
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			n.k, n.min = kBytes, 1
			break
		}
		e, err := g.node(t.Elem(), at+"[]")
		if err != nil {
			return nil, err
		}
		if e.min == 0 {
			return nil, fmt.Errorf("%s: a slice of %v, which encodes to no bytes (its count could not be bounded)", at, t.Elem())
		}
		n.k, n.elem, n.min = kSlice, e, 1
	case reflect.Array:
		e, err := g.node(t.Elem(), at+"[]")
		if err != nil {
			return nil, err
		}
		n.k, n.elem, n.min = kArray, e, t.Len()*e.min
	case reflect.Struct:
		if t.Name() == "" {
			return nil, fmt.Errorf("%s: an unnamed struct type; give it a name", at)
		}
		n.k = kStruct
		fields, err := splice(t)
		if err != nil {
			return nil, err
		}
		for _, f := range fields {
			tg, err := parseTag(f.Tag.Get("codec"))
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", f.owner.Name(), f.Name, err)
			}
			if tg.skip {
				continue
			}
			if !f.IsExported() && f.owner.PkgPath() != g.pkgPath {
				return nil, fmt.Errorf("%s.%s: an unexported field of another package's type", f.owner.Name(), f.Name)
			}
			fn, err := g.node(f.Type, f.owner.Name()+"."+f.Name)
			if err != nil {
				return nil, err
			}
			ff := &field{name: f.Name, n: fn, tag: fn.tag.merge(tg)}
			if fn.k == kSlice {
				// A slice's tag is about its elements.
				ff.tag = fn.elem.tag.merge(tg)
			}
			if err := checkTagFits(ff); err != nil {
				return nil, fmt.Errorf("%s.%s: %w", t.Name(), f.Name, err)
			}
			if ff.tag.delta && (fn.k == kUint || fn.k == kInt) || fn.k == kStruct && fn.delta {
				n.delta = true
			}
			n.fields = append(n.fields, ff)
			n.min += fn.min
		}
		g.structs = append(g.structs, n)
	default:
		return nil, fmt.Errorf("%s: type %v (%s) is not supported: use scalars, strings, slices, arrays and structs", at, t, t.Kind())
	}
	if t.Name() != "" && t.PkgPath() != "" && t.PkgPath() != g.pkgPath {
		g.importName(t.PkgPath())
	}
	g.nodes[t] = n
	return n, nil
}

// checkTagFits refuses tags on fields they cannot apply to.
func checkTagFits(f *field) error {
	k := f.n.k
	if f.n.k == kSlice {
		k = f.n.elem.k
	}
	scalar := k == kUint || k == kInt || k == kByte
	if f.tag.checks() && !scalar {
		return fmt.Errorf("tag %q on a %v: only integers (or slices of them) are checked", f.tag, f.n.t)
	}
	if f.tag.sorted && f.n.k != kSlice {
		return fmt.Errorf("sorted is for a slice of integers")
	}
	if f.tag.delta && !(k == kUint || k == kInt) {
		return fmt.Errorf("delta is for integers of 16 bits or more (or slices of them)")
	}
	if f.tag.length != "" && (f.tag.index == "" || strings.Contains(f.tag.length, ".")) {
		return fmt.Errorf("len= names a sibling field and needs index=")
	}
	return nil
}

func (g *gen) importName(path string) string {
	if n, ok := g.imports[path]; ok {
		return n
	}
	base := path[strings.LastIndex(path, "/")+1:]
	base = strings.Map(func(r rune) rune {
		if r == '-' || r == '.' {
			return '_'
		}
		return r
	}, base)
	name := base
	for i := 2; ; i++ {
		taken := slices.Contains([]string{"binary", "fmt", "wire"}, name)
		for _, v := range g.imports {
			taken = taken || v == name
		}
		if !taken {
			break
		}
		name = base + strconv.Itoa(i)
	}
	g.imports[path] = name
	return name
}

// typ is t as written in the generated file.
func (g *gen) typ(t reflect.Type) string {
	if t.Name() != "" {
		if t.PkgPath() == "" || t.PkgPath() == g.pkgPath {
			return t.Name()
		}
		return g.importName(t.PkgPath()) + "." + t.Name()
	}
	switch t.Kind() {
	case reflect.Slice:
		return "[]" + g.typ(t.Elem())
	case reflect.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), g.typ(t.Elem()))
	}
	return t.String()
}

// describe writes the schema's canonical description, which SchemaHash
// covers besides the code: names and tags matter even where the bytes
// would not change.
func (g *gen) describe(n *node, depth int) {
	in := strings.Repeat("\t", depth)
	switch n.k {
	case kStruct:
		fmt.Fprintf(&g.desc, "struct %s.%s {\n", n.t.PkgPath(), n.t.Name())
		for _, f := range n.fields {
			fmt.Fprintf(&g.desc, "%s\t%s %q ", in, f.name, f.tag.String())
			g.describe(f.n, depth+1)
		}
		fmt.Fprintf(&g.desc, "%s}\n", in)
	case kSlice:
		fmt.Fprintf(&g.desc, "%s []", n.t)
		g.describe(n.elem, depth)
	case kArray:
		fmt.Fprintf(&g.desc, "%s [%d]", n.t, n.t.Len())
		g.describe(n.elem, depth)
	default:
		fmt.Fprintf(&g.desc, "%s %s %s\n", n.t.PkgPath(), n.t, n.t.Kind())
	}
}

// checkPaths resolves every tag's path once, so a wrong one fails the
// generation rather than the compile.
func (g *gen) checkPaths(root, n *node, at string) error {
	if n.k == kSlice || n.k == kArray {
		return g.checkPaths(root, n.elem, at+"[]")
	}
	if n.k != kStruct {
		return nil
	}
	for _, f := range n.fields {
		for _, p := range []string{f.tag.index, f.tag.bound} {
			if p == "" {
				continue
			}
			if _, err := resolve(root, n, p); err != nil {
				return fmt.Errorf("%s.%s: %w", at, f.name, err)
			}
		}
		if f.tag.length != "" {
			s := fieldNamed(n, f.tag.length)
			if s == nil || s.n.k != kUint && s.n.k != kInt && s.n.k != kByte {
				return fmt.Errorf("%s.%s: len=%s is not an integer field beside it", at, f.name, f.tag.length)
			}
		}
		if err := g.checkPaths(root, f.n, at+"."+f.name); err != nil {
			return err
		}
	}
	return nil
}

func fieldNamed(n *node, name string) *field {
	for _, f := range n.fields {
		if f.name == name {
			return f
		}
	}
	return nil
}

// resolve finds the slice or string a path names, from the root or, with
// a leading dot, from the struct holding the field.
func resolve(root, holder *node, path string) (string, error) {
	n, p := root, path
	if strings.HasPrefix(path, ".") {
		n, p = holder, path[1:]
	}
	for _, name := range strings.Split(p, ".") {
		if n.k != kStruct {
			return "", fmt.Errorf("path %q: %s is not in a struct", path, name)
		}
		f := fieldNamed(n, name)
		if f == nil {
			return "", fmt.Errorf("path %q: no encoded field %s in %v", path, name, n.t)
		}
		n = f.n
	}
	if n.k != kSlice && n.k != kString && n.k != kBytes {
		return "", fmt.Errorf("path %q names a %v, not a slice or string", path, n.t)
	}
	return p, nil
}

func (g *gen) p(format string, args ...any) { fmt.Fprintf(&g.out, format, args...) }

// fn is the name of a struct type's append and decode functions.
func (g *gen) fn(t reflect.Type) string {
	if n, ok := g.fnNames[t]; ok {
		return n
	}
	name := "codec" + t.Name()
	for i := 2; slices.Contains(slices.Collect(maps.Values(g.fnNames)), name); i++ {
		name = "codec" + t.Name() + strconv.Itoa(i)
	}
	g.fnNames[t] = name
	return name
}

// --- encoding ---

func (g *gen) emitAppend(n *node) {
	g.p("func %sAppend(b []byte, %s) []byte {\n", g.fn(n.t), g.structParams(n))
	for _, f := range n.fields {
		g.appendValue(f.n, "v."+f.name, f.prev(), f.tag, 0)
	}
	g.p("return b\n}\n\n")
}

// structParams is a struct's Append and Decode parameters after the
// buffer: v, and prev when it is delta-coded.
func (g *gen) structParams(n *node) string {
	if n.delta {
		return "v, prev *" + g.typ(n.t)
	}
	return "v *" + g.typ(n.t)
}

// prev is the previous value of a delta-coded field, as the Append and
// Decode functions name it; "" for any other field.
func (f *field) prev() string {
	if f.tag.delta || f.n.k == kStruct && f.n.delta {
		return "prev." + f.name
	}
	return ""
}

// structArgs is what a struct's Append or Decode call takes after the
// buffer: &x, and, delta-coded, the previous value (a zero one when there
// is none), for both sides read one layout.
func (g *gen) structArgs(n *node, x, prev string) string {
	switch {
	case !n.delta:
		return "&" + x
	case prev == "":
		return fmt.Sprintf("&%s, &%s{}", x, g.typ(n.t))
	default:
		return fmt.Sprintf("&%s, &%s", x, prev)
	}
}

// appendValue writes code appending x (of node n); prev is the previous
// element's value for a delta-coded field.
func (g *gen) appendValue(n *node, x, prev string, tg tag, depth int) {
	switch n.k {
	case kBool:
		g.p("b = wire.AppendBool(b, %s)\n", g.toBase(n, x, "bool"))
	case kByte:
		g.p("b = append(b, byte(%s))\n", x)
	case kUint:
		if tg.delta && prev != "" {
			g.p("b = binary.AppendVarint(b, int64(uint64(%s)-uint64(%s)))\n", x, prev)
		} else {
			g.p("b = binary.AppendUvarint(b, uint64(%s))\n", x)
		}
	case kInt:
		if tg.delta && prev != "" {
			g.p("b = binary.AppendVarint(b, int64(%s)-int64(%s))\n", x, prev)
		} else {
			g.p("b = binary.AppendVarint(b, int64(%s))\n", x)
		}
	case kF32:
		g.p("b = wire.AppendFloat32(b, %s)\n", g.toBase(n, x, "float32"))
	case kF64:
		g.p("b = wire.AppendFloat64(b, %s)\n", g.toBase(n, x, "float64"))
	case kString, kBytes:
		g.p("b = wire.AppendStr(b, %s)\n", x)
	case kStruct:
		g.p("b = %sAppend(b, %s)\n", g.fn(n.t), g.structArgs(n, x, prev))
	case kArray:
		if n.elem.k == kByte {
			g.p("b = append(b, %s[:]...)\n", x)
			return
		}
		g.elemLoop(n.elem, x, depth, g.appendValue)
	case kSlice:
		if app, _ := g.sliceCalls(n.elem, tg); app != "" {
			g.p(app+"\n", x)
			return
		}
		g.p("b = binary.AppendUvarint(b, uint64(len(%s)))\n", x)
		g.elemLoop(n.elem, x, depth, g.appendValue)
	}
}

// sliceCalls is the code that appends and the code that reads a slice
// of e (tagged tg), %s standing for it, in one call of package wire's,
// given for a struct its element's Append or Decode function; "" where
// wire has none, for an element whose loop is written out.
func (g *gen) sliceCalls(e *node, tg tag) (app, read string) {
	switch e.k {
	case kStruct:
		slice := "Slice"
		if e.delta {
			slice = "DeltaSlice"
		}
		return fmt.Sprintf("b = wire.Append%s(b, %%s, %sAppend)", slice, g.fn(e.t)),
			fmt.Sprintf("wire.Read%s(d, %d, &%%s, %sDecode)", slice, e.min, g.fn(e.t))
	case kInt, kUint:
		name := map[kind]string{kInt: "Int", kUint: "Uint"}[e.k]
		if tg.delta {
			return "b = wire.AppendDeltaSlice(b, %s, wire.Append" + name + "Delta)", "wire.Read" + name + "Deltas(d, &%s)"
		}
		return "b = wire.AppendSlice(b, %s, wire.Append" + name + ")", "wire.Read" + name + "s(d, &%s)"
	case kString:
		return "b = wire.AppendSlice(b, %s, wire.AppendString)", "wire.ReadStrings(d, &%s)"
	}
	return "", ""
}

// elemLoop writes the loop over array or slice x's elements (of node e),
// each written by value on its own.
func (g *gen) elemLoop(e *node, x string, depth int, value func(n *node, x, prev string, tg tag, depth int)) {
	i := fmt.Sprintf("i%d", depth)
	g.p("for %s := range %s {\n", i, x)
	value(e, x+"["+i+"]", "", tag{}, depth+1)
	g.p("}\n")
}

// --- decoding ---

// The decode functions read through a wire.Decoder, which holds the
// helpers every generated file shares.

func (g *gen) emitDecode(n *node) {
	g.p("func %sDecode(d *wire.Decoder, %s) {\n", g.fn(n.t), g.structParams(n))
	for _, f := range n.fields {
		g.decodeValue(f.n, "v."+f.name, f.prev(), f.tag, 0)
	}
	g.p("}\n\n")
}

// conv is e converted to n's type where e's own type (base) is not it.
func (g *gen) conv(n *node, e, base string) string {
	if t := g.typ(n.t); t != base {
		return t + "(" + e + ")"
	}
	return e
}

// toBase is x, of n's type, converted to base where that is another type.
func (g *gen) toBase(n *node, x, base string) string {
	if g.typ(n.t) != base {
		return base + "(" + x + ")"
	}
	return x
}

func (g *gen) decodeValue(n *node, x, prev string, tg tag, depth int) {
	tn := g.typ(n.t)
	switch n.k {
	case kBool:
		g.p("%s = %s\n", x, g.conv(n, "d.Bool()", "bool"))
	case kByte:
		g.p("%s = %s\n", x, g.conv(n, "d.Byte()", "uint8"))
	case kUint, kInt:
		fn := "Uint"
		if n.k == kInt {
			fn = "Int"
		}
		// The short read is inlined, the full one a call (see package wire).
		if tg.delta && prev != "" {
			g.p("_ = wire.Small%sDelta(d, &%s, %s) || wire.%sDelta(d, &%s, %s)\n", fn, x, prev, fn, x, prev)
		} else {
			g.p("_ = wire.Small%s(d, &%s) || wire.%s(d, &%s)\n", fn, x, fn, x)
		}
	case kF32:
		g.p("%s = %s\n", x, g.conv(n, "d.Float32()", "float32"))
	case kF64:
		g.p("%s = %s\n", x, g.conv(n, "d.Float64()", "float64"))
	case kString:
		g.p("%s = %s\n", x, g.conv(n, "d.Str()", "string"))
	case kBytes:
		g.p("%s = %s\n", x, g.conv(n, "d.Bytes()", "[]uint8"))
	case kStruct:
		g.p("%sDecode(d, %s)\n", g.fn(n.t), g.structArgs(n, x, prev))
	case kArray:
		if n.elem.k == kByte {
			g.p("d.Array(%s[:])\n", x)
			return
		}
		g.elemLoop(n.elem, x, depth, g.decodeValue)
	case kSlice:
		e := n.elem
		if _, read := g.sliceCalls(e, tg); read != "" {
			g.p(read+"\n", x)
			return
		}
		g.p("if n := d.Count(%d); n > 0 {\n%s = make(%s, n)\n", e.min, x, tn)
		g.elemLoop(e, x, depth, g.decodeValue)
		g.p("}\n")
	}
}

// --- roots ---

func (g *gen) emitRoot(r *node) {
	t := g.typ(r.t)
	g.p("// AppendBinary appends v's encoding to b.\n")
	g.p("func (v *%s) AppendBinary(b []byte) ([]byte, error) {\n", t)
	if r.delta {
		g.p("return %sAppend(b, v, &%s{}), nil\n}\n\n", g.fn(r.t), t)
	} else {
		g.p("return %sAppend(b, v), nil\n}\n\n", g.fn(r.t))
	}
	g.p("// UnmarshalBinary sets v from data, which must be one whole encoding of\n")
	g.p("// a %s. It never panics; call Validate before trusting indexes.\n", t)
	g.p("func (v *%s) UnmarshalBinary(data []byte) error {\n", t)
	if r.delta {
		g.p("return wire.Unmarshal(data, v, func(d *wire.Decoder, v *%s) { %sDecode(d, v, &%s{}) })\n}\n\n", t, g.fn(r.t), t)
	} else {
		g.p("return wire.Unmarshal(data, v, %sDecode)\n}\n\n", g.fn(r.t))
	}

	g.p("// Validate checks what decoding cannot: that every index points into\n")
	g.p("// its table (the codec tags of %s's fields).\n", t)
	g.p("func (v *%s) Validate() error {\n", t)
	g.validate(r, r, "v", nil, 0)
	if m := g.cfg.Checks[r.t.Name()]; m != "" {
		g.p("return v.%s()\n}\n\n", m)
	} else {
		g.p("return nil\n}\n\n")
	}
}

// validate writes the checks for x (of node n, held in a struct whose
// expression is holder); at is the path for messages with a %d per loop.
func (g *gen) validate(root, n *node, x string, at []string, depth int) {
	if n.k != kStruct {
		return
	}
	for _, f := range n.fields {
		fx := x + "." + f.name
		fat := append(slices.Clip(at), "."+f.name)
		switch f.n.k {
		case kUint, kInt, kByte:
			g.checkInt(root, n, x, fx, f, fat)
		case kStruct:
			if needsValidate(f.n) {
				g.validate(root, f.n, fx, fat, depth)
			}
		case kSlice, kArray:
			e := f.n.elem
			i := fmt.Sprintf("i%d", depth)
			if f.n.k == kSlice && f.tag.sorted {
				g.p("for %s := 1; %s < len(%s); %s++ {\nif %s[%s] < %s[%s-1] {\n", i, i, fx, i, fx, i, fx, i)
				g.p("return fmt.Errorf(\"%s[%%d]: %%d is less than the element before it\"%s, %s, %s[%s])\n}\n}\n",
					root.t.Name()+strings.Join(fat, ""), fmtArgs(depth), i, fx, i)
			}
			switch {
			case (e.k == kUint || e.k == kInt || e.k == kByte) && (f.tag.index != "" || f.tag.bound != ""):
				g.p("for %s := range %s {\n", i, fx)
				g.checkInt(root, n, x, fx+"["+i+"]", &field{name: f.name, n: e, tag: f.tag}, append(slices.Clip(fat), "[%d]"))
				g.p("}\n")
			case e.k == kStruct && needsValidate(e):
				g.p("for %s := range %s {\n", i, fx)
				g.validate(root, e, fx+"["+i+"]", append(slices.Clip(fat), "[%d]"), depth+1)
				g.p("}\n")
			}
		}
	}
}

// fmtArgs lists the loop variables i0..i(depth-1) for a message.
func fmtArgs(depth int) string {
	var s strings.Builder
	for i := range depth {
		fmt.Fprintf(&s, ", i%d", i)
	}
	return s.String()
}

func needsValidate(n *node) bool {
	switch n.k {
	case kStruct:
		for _, f := range n.fields {
			if f.tag.checks() || needsValidate(f.n) {
				return true
			}
		}
	case kSlice, kArray:
		return needsValidate(n.elem)
	}
	return false
}

func (g *gen) checkInt(root, holder *node, hx, x string, f *field, at []string) {
	if f.tag.index == "" && f.tag.bound == "" {
		return
	}
	path, table := f.tag.index, ""
	if path == "" {
		path = f.tag.bound
	}
	if strings.HasPrefix(path, ".") {
		table = hx + path
	} else {
		table = "v." + path
	}
	name := strings.Join(at, "")
	args := fmtArgs(strings.Count(name, "%d"))
	vars, vals := "x, n", fmt.Sprintf("int64(%s), int64(len(%s))", x, table)
	ok := ""
	switch {
	case f.tag.index != "" && f.tag.length != "":
		vars, vals = vars+", l", vals+fmt.Sprintf(", int64(%s.%s)", hx, f.tag.length)
		ok = "x >= 0 && l >= 0 && x <= n-l"
	case f.tag.index != "":
		ok = "x >= 0 && x < n"
	default:
		ok = "x >= 0 && x <= n"
	}
	if f.tag.none != nil {
		ok = fmt.Sprintf("%s || x == %d", ok, *f.tag.none)
	}
	what := "an index of " + path
	switch {
	case f.tag.length != "":
		what = fmt.Sprintf("a span (with %s) of %s", f.tag.length, path)
	case f.tag.bound != "":
		what = "an offset within " + path
	}
	g.p("if %s := %s; !(%s) {\nreturn wire.Invalid(%q, %q, x, n%s)\n}\n", vars, vals, ok, root.t.Name()+name, what, args)
}
