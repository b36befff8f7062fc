package vulkan

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"inferno/backend/scalar"
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
	if len(src) < 16 { // at least 16 bytes: a buffer for any alignment
		src = append(src[:len(src):len(src)], make([]byte, 16-len(src))...)
	}
	return upload(r.t, r.d, src)
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

func (r *opsRig) readF32(b *Buffer, n int) []float32 { return readF32(r.t, r.d, b, n) }

// run records one dispatch of the shader name with the specialization
// constants spec and the push block push, submits it and waits.
func (r *opsRig) run(name string, spec []uint32, gx, gy, gz uint32, push []byte) {
	r.t.Helper()
	p, err := r.d.Pipeline(name, spec...)
	if err != nil {
		r.t.Fatal(err)
	}
	dispatchOnce(r.t, r.d, p, gx, gy, gz, push)
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
