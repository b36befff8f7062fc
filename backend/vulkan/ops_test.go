package vulkan

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"inferno/arch"
	"inferno/backend"
	"inferno/backend/scalar"
	"inferno/numfmt"
	"inferno/sampling"
)

// opsRig runs the operation shaders of one test on the test device.
type opsRig struct {
	t *testing.T
	d *Device
}

func newOpsRig(t *testing.T) *opsRig { return &opsRig{t: t, d: testDevice(t)} }

// buf returns a device buffer holding src.
func (r *opsRig) buf(src []byte) *Buffer {
	r.t.Helper()
	b, err := r.d.NewBuffer(int64(max(len(src), 16)))
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(b.Free)
	if len(src) > 0 {
		if err := r.d.Write(b, 0, src); err != nil {
			r.t.Fatal(err)
		}
	}
	return b
}

func (r *opsRig) f32(v []float32) *Buffer { return r.buf(F32Bytes(v)) }
func (r *opsRig) i32(v []int32) *Buffer   { return r.buf(I32Bytes(v)) }
func (r *opsRig) u16(v []uint16) *Buffer  { return r.buf(U16Bytes(v)) }

// read returns the first n bytes of b.
func (r *opsRig) read(b *Buffer, n int) []byte {
	r.t.Helper()
	dst := make([]byte, n)
	if err := r.d.Read(b, 0, dst); err != nil {
		r.t.Fatal(err)
	}
	return dst
}

func (r *opsRig) readF32(b *Buffer, n int) []float32 { return bytesF32(r.read(b, 4*n)) }

// run records one dispatch of the shader name with the specialization
// constants spec and the push block push, submits it and waits.
func (r *opsRig) run(name string, spec []uint32, gx, gy, gz uint32, push []byte) {
	r.t.Helper()
	p, err := r.d.Pipeline(name, spec...)
	if err != nil {
		r.t.Fatal(err)
	}
	rec, err := r.d.Begin()
	if err != nil {
		r.t.Fatal(err)
	}
	rec.Dispatch(p, gx, gy, gz, push)
	if err := r.d.Submit(rec); err != nil {
		r.t.Fatalf("%s: %v", name, err)
	}
}

func bytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func bytesU16(b []byte) []uint16 {
	v := make([]uint16, len(b)/2)
	for i := range v {
		v[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return v
}

// randF32 returns n values uniform in [-scale, scale).
func randF32(rng *rand.Rand, n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = (2*rng.Float32() - 1) * scale
	}
	return v
}

// relL2 returns |got - want| / |want| (the norms over every value).
func relL2(got, want []float32) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// TestOpsElementwise compares swiglu, geglu, swiglu_oai (out aliasing
// gate, as the forward pass runs them), add and add_bias with the scalar
// backend, at lengths around the workgroup size.
func TestOpsElementwise(t *testing.T) {
	r := newOpsRig(t)
	s := scalar.NewScalar()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 1000, 3*elementWG + 7} {
		gate, up := randF32(rng, n, 9), randF32(rng, n, 9) // past swiglu_oai's clamp
		gx, gy := groups2D(n, elementWG)
		for _, op := range []struct {
			name string
			ref  func(out, gate, up []float32)
		}{{"swiglu", s.SwiGLU}, {"geglu", s.GeGLU}, {"swiglu_oai", s.SwiGLUOAI}} {
			want := make([]float32, n)
			op.ref(want, gate, up)
			gb, ub := r.f32(gate), r.f32(up)
			push := pushGLU{Out: gb.Addr(), Gate: gb.Addr(), Up: ub.Addr(), N: uint32(n)}
			r.run(op.name, []uint32{elementWG}, gx, gy, 1, PushBytes(&push))
			if e := relL2(r.readF32(gb, n), want); !(e <= 1e-5) {
				t.Errorf("%s of %d values: relative L2 error %.3g", op.name, n, e)
			}
		}

		x, y := randF32(rng, n, 3), randF32(rng, n, 3)
		want := append([]float32(nil), x...)
		s.Add(want, y)
		xb := r.f32(x)
		push := pushAdd{X: xb.Addr(), Y: r.f32(y).Addr(), N: uint32(n)}
		r.run("add", []uint32{elementWG}, gx, gy, 1, PushBytes(&push))
		if got := r.readF32(xb, n); relL2(got, want) != 0 {
			t.Errorf("add of %d values: relative L2 error %.3g", n, relL2(got, want))
		}
	}

	for _, sh := range []struct{ rows, d int }{{1, 7}, {5, 1000}, {300, 64}} {
		x, bias := randF32(rng, sh.rows*sh.d, 3), randF32(rng, sh.d, 1)
		want := append([]float32(nil), x...)
		for row := range sh.rows {
			s.Add(want[row*sh.d:(row+1)*sh.d], bias)
		}
		xb := r.f32(x)
		gx, gy := groups2D(sh.rows*sh.d, elementWG)
		push := pushAddBias{X: xb.Addr(), Bias: r.f32(bias).Addr(), Rows: uint32(sh.rows), D: uint32(sh.d)}
		r.run("add_bias", []uint32{elementWG}, gx, gy, 1, PushBytes(&push))
		if got := r.readF32(xb, len(x)); relL2(got, want) != 0 {
			t.Errorf("add_bias of %d rows of %d: relative L2 error %.3g", sh.rows, sh.d, relL2(got, want))
		}
	}
}

// TestOpsRMSNorm compares rms_norm with the scalar backend on whole
// tokens, on heads (QK-norm), in place and not, on more rows than a grid
// dimension holds, and on the key heads of a fused QKV product (groups of
// rows apart), whose other values stay as they are.
func TestOpsRMSNorm(t *testing.T) {
	r := newOpsRig(t)
	s := scalar.NewScalar()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		rows, d       int
		inPlace       bool
		group, stride int // 0: packed rows
		first         int // the first row's first value
	}{{rows: 1, d: 4096}, {rows: 7, d: 1000, inPlace: true}, {rows: 5 * 32, d: 128, inPlace: true}, {rows: 3 * 16, d: 64},
		{rows: 70000, d: 8, inPlace: true},
		{rows: 5 * 2, d: 64, inPlace: true, group: 2, stride: (8 + 2*2) * 64, first: 8 * 64}, // 8 query, 2 KV heads
		{rows: 3 * 4, d: 32, group: 4, stride: 4 * 32}} {
		group, stride := max(c.group, 1), c.stride
		if stride == 0 {
			stride = c.d
		}
		n := c.first + (c.rows/group-1)*stride + group*c.d // values up to the last row's end
		x, gain := randF32(rng, n, 3), randF32(rng, c.d, 2)
		const eps = 1e-6
		want := append([]float32(nil), x...)
		if !c.inPlace {
			want = make([]float32, n)
		}
		for row := range c.rows {
			o := c.first + row/group*stride + row%group*c.d
			s.RMSNorm(want[o:o+c.d], x[o:o+c.d], gain, eps)
		}
		xb := r.f32(x)
		yb := xb
		if !c.inPlace {
			yb = r.buf(make([]byte, 4*n))
		}
		gx, gy := groups2D(c.rows, 1)
		push := pushRMSNorm{X: xb.Addr() + uint64(4*c.first), Y: yb.Addr() + uint64(4*c.first), Gain: r.f32(gain).Addr(),
			Rows: uint32(c.rows), D: uint32(c.d), Eps: eps, Group: uint32(group), Stride: uint32(stride)}
		r.run("rms_norm", []uint32{rowWG(c.d, r.d.SubgroupSize)}, gx, gy, 1, PushBytes(&push))
		if e := relL2(r.readF32(yb, n), want); !(e <= 1e-5) {
			t.Errorf("rms_norm of %d rows of %d (in place %v, groups of %d every %d): relative L2 error %.3g", c.rows, c.d, c.inPlace, group, stride, e)
		}
	}
}

// TestOpsRoPE compares rope with the scalar backend: both pair styles,
// whole and partial heads, YaRN's scaled frequencies and mscale, positions
// up to 32767. With the table and no fused multiply-adds the bits are the
// CPU's (on amd64, where Go fuses none either). A token at a position
// outside the table is left as it is, and so are the values past a
// token's heads (tokens stride apart, as the query and key heads of a
// fused QKV product with its value heads after them).
func TestOpsRoPE(t *testing.T) {
	r := newOpsRig(t)
	s := scalar.NewScalar()
	rng := rand.New(rand.NewPCG(5, 6))
	plain := &arch.Rope{Theta: 1e6}
	yarn := &arch.Rope{Theta: 10000, Scaling: arch.ScaleYaRN, Factor: 4, OrigContext: 4096}
	const maxPos = 32768
	tabs := map[[2]any][]float32{}
	for _, c := range []struct {
		heads, headDim, rotDims int
		style                   arch.RopeStyle
		rope                    *arch.Rope
		extra                   int // heads a token past those rotated
	}{
		{8, 128, 128, arch.RopeNeoX, plain, 0},
		{4, 64, 64, arch.RopeNormal, plain, 2},
		{4, 128, 64, arch.RopeNeoX, yarn, 1},
		{2, 64, 32, arch.RopeNormal, yarn, 0},
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
		pos := []int32{0, 1, maxPos - 1, -1, maxPos, 4095, 4096}
		for range 9 {
			pos = append(pos, rng.Int32N(maxPos))
		}
		width := (c.heads + c.extra) * c.headDim
		x := randF32(rng, len(pos)*width, 2)
		want := append([]float32(nil), x...)
		for i, p := range pos {
			if p >= 0 && p < maxPos {
				s.RoPE(want[i*width:i*width+c.heads*c.headDim], pos[i:i+1], c.heads, c.headDim, c.rotDims, &rope)
			}
		}
		xb := r.f32(x)
		gx, gy := groups2D(len(pos)*c.heads*c.rotDims/2, elementWG)
		push := pushRoPE{X: xb.Addr(), Pos: r.i32(pos).Addr(), Tab: r.f32(tab).Addr(),
			Tokens: uint32(len(pos)), Heads: uint32(c.heads), HeadDim: uint32(c.headDim),
			RotDims: uint32(c.rotDims), Style: ropeStyle(c.style), MaxPos: maxPos, Stride: uint32(width)}
		r.run("rope", []uint32{elementWG}, gx, gy, 1, PushBytes(&push))
		got := r.readF32(xb, len(x))
		if e := relL2(got, want); !(e <= 1e-5) {
			t.Errorf("rope %v over %d of %d values: relative L2 error %.3g", c.style, c.rotDims, c.headDim, e)
		}
		if runtime.GOARCH != "amd64" {
			continue
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Errorf("rope %v over %d of %d values: value %d (token at %d) is %v, the CPU's %v", c.style, c.rotDims, c.headDim, i, pos[i/width], got[i], want[i])
				break
			}
		}
	}
}

// TestOpsKVStore checks kv_store's half-precision bits (numfmt.F32ToF16's,
// special values included) and where they go: tokens of three sequences
// at different positions, block tables out of order, a padding token
// (position -1) that writes nothing, the rest of the cache untouched;
// keys and values packed, and read from a fused QKV product's rows.
func TestOpsKVStore(t *testing.T) {
	r := newOpsRig(t)
	rng := rand.New(rand.NewPCG(7, 8))
	const nKV, headDim, blockSize, nBlocks = 2, 64, 16, 12
	const kvDim = nKV * headDim
	perm := rng.Perm(nBlocks)
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
	tokens := 25 // token 24: padding
	pos, seq, tables, tabOff, err := BlockTables(seqs, tokens)
	if err != nil {
		t.Fatal(err)
	}
	k, v := randF32(rng, tokens*kvDim, 4), randF32(rng, tokens*kvDim, 4)
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 65504, 65520, -65519,
		1e-8, -3e-8, 0x1p-25, 0x1p-24, 0x1.8p-24, float32(math.Copysign(0, -1)), 1 + 0x1p-11, 1 + 0x3p-11, 0x1.ffcp-15}
	copy(k, special)
	copy(v[kvDim*3:], special)
	cache := make([]uint16, nBlocks*blockSize*kvDim)
	for i := range cache {
		cache[i] = 0x5555
	}
	wantK, wantV := append([]uint16(nil), cache...), append([]uint16(nil), cache...)
	for tk := range tokens {
		if pos[tk] < 0 {
			continue
		}
		p := int(pos[tk])
		row := int(tables[int(tabOff[seq[tk]])+p/blockSize])*blockSize + p%blockSize
		for i := range kvDim {
			wantK[row*kvDim+i] = numfmt.F32ToF16(k[tk*kvDim+i])
			wantV[row*kvDim+i] = numfmt.F32ToF16(v[tk*kvDim+i])
		}
	}
	const qDim = 4 * headDim
	const width = qDim + 2*kvDim // a fused QKV product's row
	fused := randF32(rng, tokens*width, 1)
	for tk := range tokens {
		copy(fused[tk*width+qDim:], k[tk*kvDim:(tk+1)*kvDim])
		copy(fused[tk*width+qDim+kvDim:], v[tk*kvDim:(tk+1)*kvDim])
	}
	kb, vb, fb := r.f32(k), r.f32(v), r.f32(fused)
	for _, src := range []struct {
		name   string
		k, v   uint64
		stride uint32
	}{{"packed", kb.Addr(), vb.Addr(), kvDim}, {"fused", fb.Addr() + 4*qDim, fb.Addr() + 4*(qDim+kvDim), width}} {
		kc, vc := r.u16(cache), r.u16(cache)
		gx, gy := groups2D(tokens*kvDim/2, elementWG)
		push := pushKVStore{K: src.k, V: src.v, KC: kc.Addr(), VC: vc.Addr(),
			Pos: r.i32(pos).Addr(), Seq: r.i32(seq).Addr(), Tables: r.i32(tables).Addr(), TabOff: r.i32(tabOff).Addr(),
			Tokens: uint32(tokens), KVDim: kvDim, BlockSize: blockSize, Stride: src.stride}
		r.run("kv_store", []uint32{elementWG}, gx, gy, 1, PushBytes(&push))
		for _, c := range []struct {
			name      string
			got, want []uint16
		}{{"keys", bytesU16(r.read(kc, 2*len(cache))), wantK}, {"values", bytesU16(r.read(vc, 2*len(cache))), wantV}} {
			bad := 0
			for i := range c.want {
				if c.got[i] != c.want[i] {
					if bad++; bad <= 5 {
						t.Errorf("%s %s: cache value %d (block %d row %d) is %#04x, want %#04x", src.name, c.name, i, i/(blockSize*kvDim), i/kvDim%blockSize, c.got[i], c.want[i])
					}
				}
			}
			if bad > 5 {
				t.Errorf("%s %s: %d values differ", src.name, c.name, bad)
			}
		}
	}
}

// TestOpsArgmax compares argmax with sampling.Argmax exactly: ties (the
// lowest index), NaNs (never chosen, 0 when the whole row is NaN),
// infinities, rows wider than the workgroup and more rows than a grid
// dimension holds.
func TestOpsArgmax(t *testing.T) {
	r := newOpsRig(t)
	rng := rand.New(rand.NewPCG(9, 10))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, c := range []struct{ rows, vocab int }{{8, 1000}, {2, 151936}, {70000, 3}} {
		logits := randF32(rng, c.rows*c.vocab, 10)
		if c.rows == 8 {
			row := func(i int) []float32 { return logits[i*c.vocab : (i+1)*c.vocab] }
			row(1)[10], row(1)[700], row(1)[999] = 50, 50, 50 // a tie
			for i := range row(2) {
				row(2)[i] = 1.5 // all equal
			}
			row(3)[0], row(3)[5], row(3)[600] = nan, nan, 40 // NaNs before the largest
			for i := range row(4) {
				row(4)[i] = nan
			}
			for i := range row(5) {
				row(5)[i] = -inf
			}
			row(6)[999], row(6)[3] = inf, inf
			row(7)[998], row(7)[999] = 30, nan
		}
		if c.rows == 2 {
			logits[c.vocab+151000], logits[c.vocab+777] = 20, 20
		}
		lb := r.f32(logits)
		wg := rowWG(c.vocab, r.d.SubgroupSize)
		// Whole rows (phase 0), and rows cut into chunks merged after
		// (phases 1 and 2), as the runner takes them for long rows.
		for _, chunks := range []int{1, 7, argmaxChunks(c.rows, c.vocab, wg)} {
			if chunks > 1 && c.rows*chunks > 1<<20 {
				continue
			}
			out := r.buf(make([]byte, 4*c.rows))
			push := pushArgmax{Logits: lb.Addr(), Out: out.Addr(), Rows: uint32(c.rows), Vocab: uint32(c.vocab)}
			if chunks == 1 {
				gx, gy := groups2D(c.rows, 1)
				r.run("argmax", []uint32{wg}, gx, gy, 1, PushBytes(&push))
			} else {
				part := r.buf(make([]byte, 8*c.rows*chunks))
				push.Part, push.Chunks, push.Phase = part.Addr(), uint32(chunks), 1
				gx, gy := groups2D(c.rows*chunks, 1)
				r.run("argmax", []uint32{wg}, gx, gy, 1, PushBytes(&push))
				push.Phase = 2
				gx, gy = groups2D(c.rows, 1)
				r.run("argmax", []uint32{wg}, gx, gy, 1, PushBytes(&push))
			}
			got := r.read(out, 4*c.rows)
			bad := 0
			for i := range c.rows {
				want := sampling.Argmax(logits[i*c.vocab : (i+1)*c.vocab])
				if g := int32(binary.LittleEndian.Uint32(got[4*i:])); g != want {
					if bad++; bad <= 5 {
						t.Errorf("argmax in %d chunks of row %d of %d of %d logits: %d, want %d", chunks, i, c.rows, c.vocab, g, want)
					}
				}
			}
		}
	}
}
