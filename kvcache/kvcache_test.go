package kvcache

import (
	"strings"
	"testing"
)

func TestParseType(t *testing.T) {
	for _, typ := range []Type{F32, F16} {
		got, err := ParseType(strings.ToUpper(typ.String()))
		if err != nil || got != typ {
			t.Errorf("ParseType(%q) = %v, %v", typ.String(), got, err)
		}
	}
	if _, err := ParseType("q8_0"); err == nil {
		t.Error("ParseType(q8_0) succeeded")
	}
	if F32.Size() != 4 || F16.Size() != 2 {
		t.Errorf("sizes %d, %d", F32.Size(), F16.Size())
	}
}

func TestWrongAccessorPanics(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"LayerF16 of F32", func() { pages(t, F32).LayerF16(0) }},
		{"LayerF32 of F16", func() { pages(t, F16).LayerF32(0) }},
		{"unknown type", func() { NewPages(1, 1, 1, 1, Type(7)) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", c.name)
				}
			}()
			c.f()
		}()
	}
}

// pages returns a pool of one block of one position of type typ.
func pages(t *testing.T, typ Type) *Pages {
	p, err := NewPages(1, 1, 1, 1, typ)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}
