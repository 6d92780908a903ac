package registry

import (
	"testing"

	"github.com/builtin-tools/builtin-tools/tiers"
)

// REG-6: annotations agree with tiers, and every hint is explicit.
func TestAnnotations(t *testing.T) {
	for _, tier := range tiers.All {
		a := Annotations(tier, "x", tier == tiers.Exec)
		if err := CheckAnnotations(tier, a); err != nil {
			t.Errorf("%s: %v", tier, err)
		}
		if *a.ReadOnlyHint != (tier == tiers.Read) || *a.DestructiveHint != (tier != tiers.Read) || *a.OpenWorldHint != (tier == tiers.Exec) {
			t.Errorf("%s: readOnly=%v destructive=%v openWorld=%v", tier, *a.ReadOnlyHint, *a.DestructiveHint, *a.OpenWorldHint)
		}
	}
	if err := CheckAnnotations(tiers.Write, Annotations(tiers.Read, "x", false)); err == nil {
		t.Error("read annotations must not agree with the write tier")
	}
}
