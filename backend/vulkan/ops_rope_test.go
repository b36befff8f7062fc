package vulkan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"inferno/arch"
	"inferno/backend"
	"inferno/backend/scalar"
	"inferno/numfmt"
)

// The tests of rope_store.comp: RoPE alone (flags 0), the cache store
// alone (no value turns), and QK-norm, RoPE and the store together.

// runRopeStore dispatches rope_store with push on the runner's grid, its
// addresses left 0 (those its flags do not read) set to x's.
func (r *opsRig) runRopeStore(push pushRopeStore) {
	r.t.Helper()
	for _, a := range []*uint64{&push.Seq, &push.Tab, &push.QGain, &push.KGain, &push.KC, &push.VC, &push.Tables, &push.TabOff} {
		if *a == 0 {
			*a = push.X
		}
	}
	gx, gy := groups2D(int(push.Tokens*(push.NQ+2*push.NKV)*push.HeadDim/2), elementWG)
	r.run("rope_store", []uint32{elementWG}, gx, gy, 1, PushBytes(&push))
}

// cacheRig is the paged cache of the store tests: blocks of blockSize
// positions, block tables out of order, four sequences (a prompt across
// two blocks, a decode token, a new sequence, the last row of a block) in
// a batch of 25 tokens whose last is padding (position -1).
type cacheRig struct {
	pos, seq, tables, tabOff []int32
	tokens                   int
}

const cacheBlockSize, cacheBlocks = 16, 12

func newCacheRig(t *testing.T, rng *rand.Rand) *cacheRig {
	perm := rng.Perm(cacheBlocks)
	tab := func(from, n int) []int32 {
		t := make([]int32, n)
		for i := range t {
			t[i] = int32(perm[from+i])
		}
		return t
	}
	seqs := []backend.SeqAttn{
		{Token: 3, N: 20, Pos: 5, Table: tab(0, 2)},  // positions 5..24
		{Token: 0, N: 1, Pos: 40, Table: tab(2, 3)},  // a decode token
		{Token: 1, N: 2, Pos: 0, Table: tab(5, 1)},   // a new sequence
		{Token: 23, N: 1, Pos: 79, Table: tab(6, 5)}, // the last row of a block
	}
	c := &cacheRig{tokens: 25} // token 24: padding
	var err error
	if c.pos, c.seq, c.tables, c.tabOff, err = BlockTables(seqs, c.tokens); err != nil {
		t.Fatal(err)
	}
	return c
}

// row returns the cache row of token tk, or -1 for padding.
func (c *cacheRig) row(tk int) int {
	p := int(c.pos[tk])
	if p < 0 {
		return -1
	}
	return int(c.tables[int(c.tabOff[c.seq[tk]])+p/cacheBlockSize])*cacheBlockSize + p%cacheBlockSize
}

// push returns rope_store's push block for the rig's tokens, with the
// buffers of its tables and positions, reading the rows at x.
func (c *cacheRig) push(r *opsRig, x *Buffer) pushRopeStore {
	return pushRopeStore{X: x.Addr(), Pos: r.i32(c.pos).Addr(), Seq: r.i32(c.seq).Addr(),
		Tables: r.i32(c.tables).Addr(), TabOff: r.i32(c.tabOff).Addr(), Tokens: uint32(c.tokens), BlockSize: cacheBlockSize}
}

// newCache returns a cache of kvDim values a position, each 0x5555.
func newCache(kvDim int) []uint16 {
	cache := make([]uint16, cacheBlocks*cacheBlockSize*kvDim)
	for i := range cache {
		cache[i] = 0x5555
	}
	return cache
}

// checkU16 reports the values of got that differ from want, up to five.
func checkU16(t *testing.T, what string, got, want []uint16, kvDim int) {
	t.Helper()
	bad := 0
	for i := range want {
		if got[i] != want[i] {
			if bad++; bad <= 5 {
				t.Errorf("%s: cache value %d (block %d row %d) is %#04x, want %#04x", what, i, i/(cacheBlockSize*kvDim), i/kvDim%cacheBlockSize, got[i], want[i])
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d values differ", what, bad)
	}
}

// TestOpsRoPE compares rope_store's RoPE (flags 0: no norm, no store)
// with the scalar backend: both pair styles, whole and partial heads,
// YaRN's scaled frequencies and mscale, positions up to 32767. With the
// table and no fused multiply-adds the bits are the CPU's (on amd64,
// where Go fuses none either). A token at a position outside the table
// (maxPos or past it) and a padding token (-1) are left as they are, and
// so are the value heads and the values past a token's heads (tokens
// stride apart, as the rows of a fused QKV product); key heads turn in
// place like the query heads.
func TestOpsRoPE(t *testing.T) {
	r := newOpsRig(t)
	s := scalar.NewScalar()
	rng := rand.New(rand.NewPCG(5, 6))
	plain := &arch.Rope{Theta: 1e6}
	yarn := &arch.Rope{Theta: 10000, Scaling: arch.ScaleYaRN, Factor: 4, OrigContext: 4096}
	const maxPos = 32768
	tabs := map[[2]any][]float32{}
	for _, c := range []struct {
		nq, nkv, headDim, rotDims int
		style                     arch.RopeStyle
		rope                      *arch.Rope
		extra                     int // heads a token past the value heads
	}{
		{8, 0, 128, 128, arch.RopeNeoX, plain, 0},
		{4, 0, 64, 64, arch.RopeNormal, plain, 2},
		{4, 0, 128, 64, arch.RopeNeoX, yarn, 1},
		{2, 0, 64, 32, arch.RopeNormal, yarn, 0},
		{4, 2, 64, 64, arch.RopeNeoX, plain, 1},
	} {
		rope := *c.rope
		rope.Style = c.style
		tab, ok := tabs[[2]any{c.rope, c.rotDims}]
		if !ok {
			var err error
			if tab, err = RopeTable(&rope, c.rotDims, maxPos); err != nil {
				t.Fatal(err)
			}
			tabs[[2]any{c.rope, c.rotDims}] = tab
		}
		pos := []int32{0, 1, maxPos - 1, -1, maxPos, maxPos + 5, 4095, 4096}
		for range 9 {
			pos = append(pos, rng.Int32N(maxPos))
		}
		turned := (c.nq + c.nkv) * c.headDim
		width := (c.nq + 2*c.nkv + c.extra) * c.headDim
		x := randF32(rng, len(pos)*width, 2)
		want := append([]float32(nil), x...)
		for i, p := range pos {
			if p >= 0 && p < maxPos {
				s.RoPE(want[i*width:i*width+turned], pos[i:i+1], c.nq+c.nkv, c.headDim, c.rotDims, &rope)
			}
		}
		xb := r.f32(x)
		r.runRopeStore(pushRopeStore{X: xb.Addr(), Pos: r.i32(pos).Addr(), Tab: r.f32(tab).Addr(),
			Tokens: uint32(len(pos)), NQ: uint32(c.nq), NKV: uint32(c.nkv), HeadDim: uint32(c.headDim),
			RotDims: uint32(c.rotDims), Style: ropeStyle(c.style), MaxPos: maxPos, Stride: uint32(width)})
		got := r.readF32(xb, len(x))
		if e := relL2(got, want); !(e <= 1e-5) {
			t.Errorf("rope %v over %d of %d values, %d+%d heads: relative L2 error %.3g", c.style, c.rotDims, c.headDim, c.nq, c.nkv, e)
		}
		for i := range got {
			if i%width >= turned || pos[i/width] < 0 || pos[i/width] >= maxPos || runtime.GOARCH == "amd64" {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Errorf("rope %v over %d of %d values, %d+%d heads: value %d (token at %d) is %v, the CPU's %v", c.style, c.rotDims, c.headDim, c.nq, c.nkv, i, pos[i/width], got[i], want[i])
					break
				}
			}
		}
	}
}

// TestOpsKVStore checks rope_store's store (flags ropeStore, rotDims 0:
// no value turns) of keys and values read from a fused QKV product's rows
// (with query heads, and without: keys and values alone): the
// half-precision bits (numfmt.F32ToF16's, special values included) and
// where they go: tokens of four sequences at different positions, block
// tables out of order, a padding token (position -1) that writes nothing,
// the rest of the cache untouched, the rows themselves unchanged.
func TestOpsKVStore(t *testing.T) {
	r := newOpsRig(t)
	rng := rand.New(rand.NewPCG(7, 8))
	const nKV, headDim = 2, 64
	const kvDim = nKV * headDim
	c := newCacheRig(t, rng)
	k, v := randF32(rng, c.tokens*kvDim, 4), randF32(rng, c.tokens*kvDim, 4)
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 65504, 65520, -65519,
		1e-8, -3e-8, 0x1p-25, 0x1p-24, 0x1.8p-24, float32(math.Copysign(0, -1)), 1 + 0x1p-11, 1 + 0x3p-11, 0x1.ffcp-15}
	copy(k, special)
	copy(v[kvDim*3:], special)
	cache := newCache(kvDim)
	wantK, wantV := append([]uint16(nil), cache...), append([]uint16(nil), cache...)
	for tk := range c.tokens {
		if row := c.row(tk); row >= 0 {
			for i := range kvDim {
				wantK[row*kvDim+i] = numfmt.F32ToF16(k[tk*kvDim+i])
				wantV[row*kvDim+i] = numfmt.F32ToF16(v[tk*kvDim+i])
			}
		}
	}
	for _, nq := range []int{0, 4} {
		qDim := nq * headDim
		width := qDim + 2*kvDim
		rows := randF32(rng, c.tokens*width, 1)
		for tk := range c.tokens {
			copy(rows[tk*width+qDim:], k[tk*kvDim:(tk+1)*kvDim])
			copy(rows[tk*width+qDim+kvDim:], v[tk*kvDim:(tk+1)*kvDim])
		}
		xb, kc, vc := r.f32(rows), r.u16(cache), r.u16(cache)
		push := c.push(r, xb)
		push.KC, push.VC = kc.Addr(), vc.Addr()
		push.NQ, push.NKV, push.HeadDim, push.Stride, push.Flags = uint32(nq), nKV, headDim, uint32(width), ropeStore
		r.runRopeStore(push)
		checkU16(t, "keys", bytesU16(r.read(kc, 2*len(cache))), wantK, kvDim)
		checkU16(t, "values", bytesU16(r.read(vc, 2*len(cache))), wantV, kvDim)
		got := r.readF32(xb, len(rows))
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(rows[i]) {
				t.Errorf("%d query heads: row value %d changed from %v to %v", nq, i, rows[i], got[i])
				break
			}
		}
	}
}

// TestOpsRopeNorm checks rope_store's QK-norm (query and key heads each
// with their own gains, grouped-query heads) followed by RoPE, against
// scalar.RMSNorm then scalar.RoPE, and the store of the keys and values.
// Tokens at maxPos or past it are normalized, not rotated; the padding
// token is left alone.
//
// First with ropeNorm alone, which writes the keys back in place too:
// each query and key head within 1e-5 (relative L2) of the CPU's, the
// value heads and the padding token unchanged. Then with ropeNorm |
// ropeStore on the same rows: the query heads get the bits of the first
// run, the keys and values are not written back, and the stored keys are
// exactly numfmt.F32ToF16 of the first run's float32 keys (the chosen
// comparison: the halves of the shader's own float32, which is checked
// against the CPU's above), which is the CPU's half wherever the two
// float32 are equal (the test logs how many are, and how many one ulp
// apart); the stored values are exactly F32ToF16 of the rows'.
func TestOpsRopeNorm(t *testing.T) {
	r := newOpsRig(t)
	s := scalar.NewScalar()
	rng := rand.New(rand.NewPCG(15, 16))
	const eps = 1e-6
	for _, cs := range []struct {
		nq, nkv, headDim, rotDims int
		style                     arch.RopeStyle
		rope                      *arch.Rope
	}{
		{8, 2, 128, 128, arch.RopeNeoX, &arch.Rope{Theta: 1e6}},
		{6, 2, 64, 32, arch.RopeNormal, &arch.Rope{Theta: 10000, Scaling: arch.ScaleYaRN, Factor: 4, OrigContext: 4096}},
	} {
		rope := *cs.rope
		rope.Style = cs.style
		const maxPos = 64 // the token at position 79 is past it
		tab, err := RopeTable(&rope, cs.rotDims, maxPos)
		if err != nil {
			t.Fatal(err)
		}
		c := newCacheRig(t, rng)
		hd, kvDim := cs.headDim, cs.nkv*cs.headDim
		width := (cs.nq + 2*cs.nkv) * hd
		x := randF32(rng, c.tokens*width, 3)
		qgain, kgain := randF32(rng, hd, 2), randF32(rng, hd, 2)
		want := append([]float32(nil), x...)
		for tk := range c.tokens {
			if c.pos[tk] < 0 {
				continue
			}
			for h := range cs.nq + cs.nkv {
				head := want[tk*width+h*hd : tk*width+(h+1)*hd]
				g := qgain
				if h >= cs.nq {
					g = kgain
				}
				s.RMSNorm(head, head, g, eps)
				if c.pos[tk] < maxPos {
					s.RoPE(head, c.pos[tk:tk+1], 1, hd, cs.rotDims, &rope)
				}
			}
		}
		name := fmt.Sprintf("%v %d+%d heads of %d", cs.style, cs.nq, cs.nkv, hd)

		xb := r.f32(x)
		push := c.push(r, xb)
		push.Tab, push.QGain, push.KGain = r.f32(tab).Addr(), r.f32(qgain).Addr(), r.f32(kgain).Addr()
		push.NQ, push.NKV, push.HeadDim, push.RotDims = uint32(cs.nq), uint32(cs.nkv), uint32(hd), uint32(cs.rotDims)
		push.Style, push.MaxPos, push.Stride, push.Eps = ropeStyle(cs.style), maxPos, uint32(width), eps
		push.Flags = ropeNorm
		r.runRopeStore(push)
		ours := r.readF32(xb, len(x))
		for tk := range c.tokens {
			for h := range cs.nq + 2*cs.nkv {
				o := tk*width + h*hd
				got, w := ours[o:o+hd], want[o:o+hd]
				if c.pos[tk] >= 0 && h < cs.nq+cs.nkv {
					if e := relL2(got, w); !(e <= 1e-5) {
						t.Errorf("%s: token %d (position %d) head %d: relative L2 error %.3g", name, tk, c.pos[tk], h, e)
					}
					continue
				}
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(w[i]) {
						t.Errorf("%s: token %d (position %d) head %d value %d changed from %v to %v", name, tk, c.pos[tk], h, i, w[i], got[i])
						break
					}
				}
			}
		}

		// The same rows again, normalized, rotated and stored.
		if err := r.d.Write(xb, 0, F32Bytes(x)); err != nil {
			t.Fatal(err)
		}
		cache := newCache(kvDim)
		kc, vc := r.u16(cache), r.u16(cache)
		push.KC, push.VC, push.Flags = kc.Addr(), vc.Addr(), ropeNorm|ropeStore
		r.runRopeStore(push)
		stored := r.readF32(xb, len(x))
		for i := range stored {
			w := x[i]
			if i%width < cs.nq*hd && c.pos[i/width] >= 0 {
				w = ours[i]
			}
			if math.Float32bits(stored[i]) != math.Float32bits(w) {
				t.Errorf("%s with the store: row value %d (token %d) is %v, want %v", name, i, i/width, stored[i], w)
				break
			}
		}
		wantK, wantV := append([]uint16(nil), cache...), append([]uint16(nil), cache...)
		same, near := 0, 0
		for tk := range c.tokens {
			row := c.row(tk)
			if row < 0 {
				continue
			}
			for i := range kvDim {
				o := tk*width + cs.nq*hd + i
				wantK[row*kvDim+i] = numfmt.F32ToF16(ours[o])
				wantV[row*kvDim+i] = numfmt.F32ToF16(x[o+kvDim])
				switch f32Ulps(ours[o], want[o]) {
				case 0: // the stored half is the CPU's
					same++
				case 1:
					near++
				}
			}
		}
		t.Logf("%s: of the stored keys, %d have the CPU's float32 bits, %d are one ulp off", name, same, near)
		checkU16(t, name+" keys", bytesU16(r.read(kc, 2*len(cache))), wantK, kvDim)
		checkU16(t, name+" values", bytesU16(r.read(vc, 2*len(cache))), wantV, kvDim)
	}
}

// f32Ulps returns how many float32 values apart a and b are (both finite,
// of one sign; a large number otherwise).
func f32Ulps(a, b float32) int64 {
	if math.Signbit(float64(a)) != math.Signbit(float64(b)) {
		if a == 0 && b == 0 {
			return 0
		}
		return math.MaxInt64
	}
	d := int64(math.Float32bits(a)) - int64(math.Float32bits(b))
	return max(d, -d)
}
