package tiers

import (
	"strings"
	"testing"
)

// REG-5: normal sees every tier, plan and readonly see read only.
func TestModeSees(t *testing.T) {
	want := map[Mode]map[Tier]bool{
		Normal:   {Read: true, Write: true, Exec: true},
		Plan:     {Read: true},
		ReadOnly: {Read: true},
	}
	for _, m := range Modes {
		for _, tier := range All {
			if got := m.Sees(tier); got != want[m][tier] {
				t.Errorf("%s.Sees(%s) = %v, want %v", m, tier, got, want[m][tier])
			}
		}
	}
	if Mode("bogus").Sees(Read) {
		t.Error("an unknown mode must see nothing")
	}
}

func TestParse(t *testing.T) {
	if _, err := ParseMode("plan"); err != nil {
		t.Fatal(err)
	}
	_, err := ParseMode("planning")
	if err == nil || !strings.Contains(err.Error(), "normal, plan, readonly") {
		t.Fatalf("bad mode error should list the modes, got %v", err)
	}
	if _, err := ParseTier("exec"); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseTier("admin"); err == nil {
		t.Fatal("unknown tier accepted")
	}
}

func TestRefusalSaysWhy(t *testing.T) {
	msg := Plan.Refusal("write", Write)
	for _, want := range []string{`"write"`, "tier write", "plan mode", "read tools only"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q lacks %q", msg, want)
		}
	}
}
