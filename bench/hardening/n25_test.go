//go:build hardening

package hardening

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// N25: refusals under a folder<->link swap race read as one plain message,
// and no refusal names where an outside link points.
func TestN25(t *testing.T) { runCase(t, "N25", caseN25) }

var rawErrors = []string{"readlink", "statat", "invalid argument", "path escapes from parent", "L---------"}

func caseN25(c *cx) {
	const calls = 300
	root, outside := c.root, c.outside
	sub, sublink := filepath.Join(root, "sub"), filepath.Join(root, "sublink")
	writeFile(filepath.Join(sub, "a.txt"), "inside\n")
	writeFile(filepath.Join(outside, "dir", "a.txt"), "outside\n")
	check(os.Symlink("../outside/dir", sublink))
	s := c.serve(root, "--without", "lsp")
	defer s.close()
	classify := func(rs []toolResult) (refused, raw, named int, sample string) {
		for _, r := range rs {
			if r.ok() {
				continue
			}
			refused++
			t := r.text
			isRaw := false
			for _, w := range rawErrors {
				if strings.Contains(t, w) {
					isRaw = true
				}
			}
			if isRaw {
				raw++
				if sample == "" {
					sample = excerpt(t, 120)
				}
			}
			if strings.Contains(t, outside) || strings.Contains(t, "outside/dir") {
				named++
			}
		}
		return
	}
	for _, tool := range []string{"read", "write"} {
		c.sub(tool, func(c *cx) {
			w := startSwapper(sub, sublink)
			var rs []toolResult
			for i := 0; i < calls; i++ {
				args := map[string]any{"path": "sub/a.txt"}
				if tool == "write" {
					args = map[string]any{"path": fmt.Sprintf("sub/n%d.txt", i), "content": "n\n"}
				}
				rs = append(rs, s.tool(tool, args))
			}
			w.halt()
			refused, raw, named, sample := classify(rs)
			c.line(fmt.Sprintf("%d %s calls under a sub<->sublink swap loop: refusals; raw system errors; naming the outside path", calls, tool),
				fmt.Sprintf("%d; %d; %d (a raw one: %s)", refused, raw, named, sample), map[string]string{"read": "178; 11; 166 (statat sub/a.txt: path escapes from parent)", "write": "275; 0; 275"}[tool])
			c.want(refused > 0, "the race refused some calls (else it measured nothing)")
			c.want(raw == 0 && named == 0, "every refusal plain, none naming the outside")
		})
	}
	c.sub("static link", func(c *cx) {
		r := s.tool("read", map[string]any{"path": "sublink/a.txt"})
		named := strings.Contains(r.text, outside)
		c.line("read sublink/a.txt (a link to ../outside/dir): the refusal names the outside path?", fmt.Sprintf("%s (%s)", yesNo(named), r.summary(160)), "yes (\"sublink/a.txt\" resolves to /tmp/…/outside/dir/a.txt, outside the root …)")
		c.want(r.err == nil && r.isError && !named, "refused, naming only the in-root path")
	})
}
