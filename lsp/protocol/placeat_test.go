package protocol

import (
	"testing"
)

// PlaceAt names a column as findSymbol finds it again: the round trip
// lands on the same byte, and a column where the name does not start is
// refused.
func TestPlaceAt(t *testing.T) {
	text := "\tx := s.Save(1) + c.Save(2) // Saved"
	for _, col := range []int{8, 20} {
		p, ok := PlaceAt(text, 3, col, "Save")
		if !ok {
			t.Fatalf("PlaceAt(%d) refused a column where Save starts", col)
		}
		d := NewDocument("a\nb\n" + text + "\n")
		line, at, _, err := FindSymbol(d, "f.go", p)
		if err != nil || line != 2 || at != col {
			t.Errorf("PlaceAt(%d) = %+v, found again at line %d col %d (%v)", col, p, line, at, err)
		}
	}
	if p, ok := PlaceAt(text, 3, 9, "Save"); ok {
		t.Errorf("PlaceAt at a column inside the name gave %+v", p)
	}
	if _, ok := PlaceAt(text, 3, 31, "Save"); ok {
		t.Error("PlaceAt took the Save of Saved, which findSymbol does not count as a word")
	}
}
