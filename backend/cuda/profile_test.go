package cuda

import (
	"testing"
	"time"
)

// TestOpTable checks the profiles' table: calls and times summed by name,
// largest total first, equal totals in their first order, and sorted
// returning a copy.
func TestOpTable(t *testing.T) {
	t.Parallel()
	var tb opTable
	for _, k := range []struct {
		name string
		us   float64
	}{{"a", 1}, {"b", 5}, {"a", 2}, {"c", 3}, {"d", 3}} {
		tb.add(k.name, k.us)
	}
	got := tb.sorted()
	want := []struct {
		name  string
		calls int
		us    float64
	}{{"b", 1, 5}, {"a", 2, 3}, {"c", 1, 3}, {"d", 1, 3}}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Name != w.name || got[i].Calls != w.calls || got[i].Total != time.Duration(w.us*1e3) {
			t.Errorf("row %d: %+v, want %s %d calls %v us", i, got[i], w.name, w.calls, w.us)
		}
	}
	got[0].Calls = 99
	if tb.sorted()[0].Calls != 1 {
		t.Error("sorted returned the table itself, not a copy")
	}
}
