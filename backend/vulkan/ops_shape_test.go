package vulkan

import (
	"slices"
	"testing"

	"inferno/backend"
)

// TestGroups2D checks that the grids cover n items with at most 65535
// workgroups a dimension and less than a row of workgroups to spare.
func TestGroups2D(t *testing.T) {
	for _, c := range []struct{ n, per int }{{0, 256}, {1, 256}, {256, 256}, {257, 256}, {65535, 1}, {65536, 1}, {70000, 1}, {1 << 26, 256}, {1<<31 - 1, 1}} {
		gx, gy := groups2D(c.n, c.per)
		total := int(gx) * int(gy) * c.per
		if gx == 0 || gy == 0 || gx > maxGroups || gy > maxGroups || total < c.n || c.n > 0 && total-c.n >= int(gx)*c.per+c.per {
			t.Errorf("groups2D(%d, %d) = %d x %d", c.n, c.per, gx, gy)
		}
	}
}

// TestPickAttnShape checks the shapes chosen for the heads and devices
// the backend meets: within the device's shared memory, HPW dividing the
// group, at most maxAttnRows rows, and the bad head sizes refused.
func TestPickAttnShape(t *testing.T) {
	for _, hd := range []int{64, 80, 128, 256} {
		for _, g := range []int{1, 2, 4, 5, 6, 8, 16, 32} {
			for _, dev := range []struct{ sub, shared uint32 }{{8, 32 << 10}, {32, 48 << 10}, {64, 64 << 10}, {32, 16 << 10}} {
				for _, prompt := range []bool{false, true} {
					s, err := pickAttnShape(hd, g, dev.sub, dev.shared, prompt)
					if err != nil {
						t.Errorf("head %d, group %d, %+v: %v", hd, g, dev, err)
						continue
					}
					if s.shared() > dev.shared || g%int(s.HPW) != 0 || s.HPW*s.TQ > maxAttnRows || s.WG < dev.sub || s.WG%dev.sub != 0 || s.D != uint32(hd) || !prompt && s.TQ != 1 {
						t.Errorf("head %d, group %d, %+v, prompt %v: shape %+v (%d bytes shared)", hd, g, dev, prompt, s, s.shared())
					}
				}
			}
		}
	}
	// Decode on a device with room for them takes the wide workgroups.
	for _, hd := range []int{64, 128, 256} {
		if s, err := pickAttnShape(hd, 2, 32, 48<<10, false); err != nil || s.WG < attnDecodeInvocations {
			t.Errorf("decode, heads of %d: shape %+v, %v: want %d invocations or more", hd, s, err, attnDecodeInvocations)
		}
	}
	for _, hd := range []int{0, 12, 1024} {
		if _, err := pickAttnShape(hd, 1, 32, 48<<10, false); err == nil {
			t.Errorf("heads of %d values accepted", hd)
		}
	}
	if _, err := pickAttnShape(256, 1, 32, 1<<10, false); err == nil {
		t.Error("a shape larger than the shared memory accepted")
	}
}

// TestAttnSplits checks that decode at depth is cut into runs of keys
// and that full batches and short contexts are not.
func TestAttnSplits(t *testing.T) {
	s := attnShape{WG: 64, HPW: 4, TQ: 1, D: 128}
	for _, c := range []struct{ tiles, heads, keys, want int }{
		{1, 32, 4096, 16},   // 8 workgroups: 16 runs of 256 keys
		{1, 32, 32768, 32},  // 8 workgroups: 32 runs
		{1, 32, 100, 1},     // too few keys
		{64, 32, 4096, 1},   // 512 workgroups already
		{4, 32, 1 << 20, 8}, // 32 workgroups: 8 runs
	} {
		if got := attnSplits(c.tiles, c.heads, c.keys, s); got != c.want {
			t.Errorf("attnSplits(%d tiles, %d heads, %d keys) = %d, want %d", c.tiles, c.heads, c.keys, got, c.want)
		}
	}
}

// TestBlockTablesTiles checks the packed tables, positions and tiles of
// a batch, and that a sequence outside the batch is refused.
func TestBlockTablesTiles(t *testing.T) {
	seqs := []backend.SeqAttn{{Token: 2, N: 5, Pos: 30, Table: []int32{7, 3, 9}}, {Token: 0, N: 1, Pos: 4, Table: []int32{1}}}
	pos, seq, tables, tabOff, err := BlockTables(seqs, 8)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pos, []int32{4, -1, 30, 31, 32, 33, 34, -1}) || !slices.Equal(seq, []int32{1, 0, 0, 0, 0, 0, 0, 0}) ||
		!slices.Equal(tables, []int32{7, 3, 9, 1}) || !slices.Equal(tabOff, []int32{0, 3}) {
		t.Errorf("BlockTables: pos %v seq %v tables %v offsets %v", pos, seq, tables, tabOff)
	}
	if got := AttnTiles(seqs, 2); !slices.Equal(got, []int32{2, 2, 4, 2, 6, 1, 0, 1}) {
		t.Errorf("AttnTiles: %v", got)
	}
	if _, _, _, _, err := BlockTables(seqs, 6); err == nil {
		t.Error("a sequence past the batch accepted")
	}
}
