package scheduler

import (
	"context"
	"testing"
)

// TestStreamQueue: a Stream delivers its events in order whether its
// reader keeps up or lags, reuses its queue once read (a token pushed and
// read allocates nothing: the scheduler pushes one a sequence every
// step), and holds no more than twice what waits.
func TestStreamQueue(t *testing.T) {
	ctx := context.Background()
	s := newStream()
	next := int32(0)
	read := func() {
		t.Helper()
		ev, ok := s.Next(ctx)
		if !ok || ev.Token.ID != next {
			t.Fatalf("event %d: got %d (ok %v)", next, ev.Token.ID, ok)
		}
		next++
	}
	pushed := int32(0)
	push := func() {
		var ev Event
		ev.HasToken, ev.Token.ID = true, pushed
		s.push(ev, false)
		pushed++
	}
	// A reader that keeps up.
	if a := testing.AllocsPerRun(1000, func() { push(); read() }); a != 0 {
		t.Errorf("a pushed and read event: %v allocations, want 0", a)
	}
	// A reader that lags: three pushed for every one read.
	for range 1000 {
		push()
		push()
		push()
		read()
	}
	if waiting := int(pushed - next); cap(s.events) > 2*waiting+16 {
		t.Errorf("%d events wait in a queue of capacity %d", waiting, cap(s.events))
	}
	for next < pushed {
		read()
	}
	s.push(Event{}, true)
	if _, ok := s.Next(ctx); !ok {
		t.Fatal("the last event was not delivered")
	}
	if _, ok := s.Next(ctx); ok {
		t.Fatal("an event after the last")
	}
}
