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

// TestGrowth checks, for both types, that buffers grow by doubling up to
// MaxLen, keep the stored positions, and that Reserve fails past MaxLen.
func TestGrowth(t *testing.T) {
	const layers, dim, maxLen = 2, 3, 200
	for _, typ := range []Type{F32, F16} {
		c := NewBasic(layers, dim, maxLen, typ)
		if c.Type() != typ || c.MaxLen() != maxLen || c.Len() != 0 || c.Bytes() != 0 {
			t.Fatalf("%v: new cache: type %v, max %d, len %d, %d bytes", typ, c.Type(), c.MaxLen(), c.Len(), c.Bytes())
		}
		// mark writes (or, with check, compares) a marker at positions
		// 0..n-1 of layer l's keys and values, and returns the buffer length.
		mark := func(l, n int, check bool) int {
			var size int
			for p := range n {
				want := uint16(l*1000 + p)
				var got uint16
				if typ == F32 {
					k, v := c.LayerF32(l)
					size = len(k)
					if !check {
						k[p*dim], v[p*dim+dim-1] = float32(want), float32(want)
					}
					got = uint16(k[p*dim])
					if uint16(v[p*dim+dim-1]) != got {
						got = ^want
					}
				} else {
					k, v := c.LayerF16(l)
					size = len(k)
					if !check {
						k[p*dim], v[p*dim+dim-1] = want, want
					}
					got = k[p*dim]
					if v[p*dim+dim-1] != got {
						got = ^want
					}
				}
				if got != want {
					t.Fatalf("%v: layer %d position %d lost", typ, l, p)
				}
			}
			return size
		}
		for _, step := range []struct{ n, room int }{{1, 64}, {64, 64}, {65, 128}, {129, 200}, {200, 200}} {
			if err := c.Reserve(step.n); err != nil {
				t.Fatal(err)
			}
			for l := range layers {
				mark(l, c.Len(), true)
				if size := mark(l, step.n, false); size != step.room*dim {
					t.Fatalf("%v: Reserve(%d): %d values, want %d", typ, step.n, size, step.room*dim)
				}
			}
			c.SetLen(step.n)
		}
		if want := int64(2*layers*maxLen*dim) * int64(typ.Size()); c.Bytes() != want {
			t.Errorf("%v: %d bytes, want %d", typ, c.Bytes(), want)
		}
		if err := c.Reserve(maxLen + 1); err == nil {
			t.Errorf("%v: Reserve past MaxLen succeeded", typ)
		}
		c.SetLen(10) // truncate
		if err := c.Reserve(150); err != nil || c.Len() != 10 {
			t.Fatalf("%v: after truncation: %v, len %d", typ, err, c.Len())
		}
		mark(1, 10, true)
		c.Reset()
		if c.Len() != 0 || c.Bytes() == 0 {
			t.Errorf("%v: Reset: len %d, %d bytes", typ, c.Len(), c.Bytes())
		}
	}
}

func TestWrongAccessorPanics(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"LayerF16 of F32", func() { NewBasic(1, 1, 1, F32).LayerF16(0) }},
		{"LayerF32 of F16", func() { NewBasic(1, 1, 1, F16).LayerF32(0) }},
		{"unknown type", func() { NewBasic(1, 1, 1, Type(7)) }},
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
