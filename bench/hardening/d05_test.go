//go:build hardening

package hardening

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var imageWritten = regexp.MustCompile(`written to (.*)\]`)

// D5: `call read` of an image in a root holding a link read-1.png -> victim
// writes the image into a private folder, never through the link.
func TestD5(t *testing.T) { runCase(t, "D5", caseD5) }

func caseD5(c *cx) {
	root, outside := c.root, c.outside
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := 0; i < 8; i++ {
		img.Set(i, i, color.RGBA{255, 0, 0, 255})
	}
	var b bytes.Buffer
	check(png.Encode(&b, img))
	check(os.WriteFile(filepath.Join(root, "evil.png"), b.Bytes(), 0o644))
	victim := filepath.Join(outside, "target")
	writeFile(victim, "precious\n")
	check(os.Symlink("../outside/target", filepath.Join(root, "read-1.png")))
	tmp := filepath.Join(c.base, "tmp") // TMPDIR of the call, removed with the case
	check(os.MkdirAll(tmp, 0o755))

	o := c.call(root, append(c.env(), "TMPDIR="+tmp), "--mode", "readonly", "read", `{"path":"evil.png"}`)
	got := readFile(victim)
	c.line("call --mode readonly read evil.png beside read-1.png -> ../outside/target: victim overwritten",
		fmt.Sprintf("%s (victim reads %q)", yesNo(got != "precious\n"), excerpt(got, 40)),
		"yes, with the PNG bytes")
	c.want(got == "precious\n", "the victim unchanged")
	where := "no image path printed: " + o.summary(200)
	safe := false
	if m := imageWritten.FindStringSubmatch(o.stdout); m != nil {
		p := m[1]
		rel := p
		if strings.HasPrefix(p, tmp) {
			rel = "$TMPDIR" + strings.TrimPrefix(p, tmp)
		}
		fi, err := os.Lstat(p)
		kind := "missing"
		if err == nil {
			kind = fmt.Sprintf("regular file of %d bytes", fi.Size())
			if fi.Mode()&os.ModeSymlink != 0 {
				kind = "a link"
			}
		}
		in := strings.HasPrefix(p, root+string(filepath.Separator))
		where = fmt.Sprintf("%s (%s; inside the root: %s)", rel, kind, yesNo(in))
		safe = err == nil && fi.Mode().IsRegular() && !in
	}
	c.line("where the image went", where, "./read-1.png in the current folder, through the link")
	c.want(safe, "the image in a regular file outside the root")
}
