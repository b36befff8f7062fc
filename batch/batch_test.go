package batch

import (
	"strings"
	"testing"
)

// TestHidden: AddHidden lists a run's last token in Hidden, Reset empties
// it, and Check refuses hidden rows out of order or outside the batch.
func TestHidden(t *testing.T) {
	var b Batch
	s := b.AddSeq([]int32{0})
	b.AddHidden(s, []int32{1, 2, 3}, 0)
	b.Add(b.AddSeq([]int32{1}), []int32{4, 5}, 0, true)
	b.AddHidden(b.AddSeq([]int32{2}), []int32{6}, 0)
	if want := []int32{2, 5}; len(b.Hidden) != 2 || b.Hidden[0] != want[0] || b.Hidden[1] != want[1] {
		t.Fatalf("hidden %v, want %v", b.Hidden, want)
	}
	if len(b.Outputs) != 1 || b.Outputs[0] != 4 {
		t.Fatalf("outputs %v", b.Outputs)
	}
	if err := b.Check(10, 16, 16, 3); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]int32{{5, 2}, {2, 2}, {6}, {-1}} {
		b.Hidden = bad
		if err := b.Check(10, 16, 16, 3); err == nil || !strings.Contains(err.Error(), "hidden row") {
			t.Errorf("hidden %v: %v", bad, err)
		}
	}
	b.Reset()
	if len(b.Hidden) != 0 || len(b.Tokens) != 0 {
		t.Errorf("after Reset: %d hidden rows, %d tokens", len(b.Hidden), len(b.Tokens))
	}
}
