package vulkan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"inferno/gguf"
)

// intDotDevice returns the test device, skipping without the integer dot
// products.
func intDotDevice(t testing.TB) *Device {
	d := testDevice(t)
	if !d.IntegerDot {
		t.Skipf("%s has no VK_KHR_shader_integer_dot_product", d.Name)
	}
	return d
}

// quantRef is quant_act's output read back: the integers (256*hi + lo)
// and the (scale, sum) pair of each chunk of 16.
type quantRef struct {
	q    []int32
	d, s []float32
}

// value returns the quantized value c of token t (dx*qx).
func (qr *quantRef) value(cols, t, c int) float64 {
	i := t*cols + c
	return float64(qr.d[i/16]) * float64(qr.q[i])
}

// runQuantAct quantizes n tokens of x in mode on the device into xq and
// reads the result back; gy, when not 0, is the grid's workgroups in y
// (fewer than n: they stride).
func runQuantAct(t *testing.T, d *Device, mode uint32, x, gain *Buffer, xq *Buffer, cols, n int, eps float32, gy uint32) *quantRef {
	t.Helper()
	local := quantActSpec(d.SubgroupSize)
	p, err := d.Pipeline("quant_act", local, mode)
	if err != nil {
		t.Fatal(err)
	}
	vb, mb := quantBytes(n, cols)
	push := pushQuantAct{X: x.Addr(), Gain: x.Addr(), XQ: xq.Addr(), XM: xq.Addr() + uint64(vb), Cols: uint32(cols), N: uint32(n), Eps: eps}
	switch mode {
	case xNorm:
		push.Gain = gain.Addr()
	case xSwiGLU:
		push.XStride = uint32(2 * cols)
	}
	r, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	gx, gy0 := quantActGroups(cols, n, local)
	if gy == 0 {
		gy = gy0
	}
	r.Dispatch(p, gx, gy, 1, PushBytes(&push))
	if err := d.Submit(r); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, vb+mb)
	if err := d.Read(xq, 0, raw); err != nil {
		t.Fatal(err)
	}
	qr := &quantRef{q: make([]int32, n*cols)}
	for i := range qr.q {
		ch, k := i/16, i%16
		hi, lo := int8(raw[32*ch+k]), int8(raw[32*ch+16+k])
		if hi < -127 {
			t.Fatalf("value %d: high byte %d", i, hi)
		}
		qr.q[i] = 256*int32(hi) + int32(lo)
	}
	m := hostF32(raw[vb:], int(mb/4))
	for i := 0; i < len(m); i += 2 {
		qr.d = append(qr.d, m[i])
		qr.s = append(qr.s, m[i+1])
	}
	return qr
}

// TestQuantAct checks quant_act in each input mode against the inputs
// computed in float64: each chunk's scale is its largest |v|/32512
// (within float32 rounding of the input's computation), each value
// within half a step of v (and a rounding of v's computation), each sum
// the scale times the values' sum; the high bytes within -127..127; with
// the grid's workgroups for each token, and fewer, striding.
func TestQuantAct(t *testing.T) {
	d := intDotDevice(t)
	rng := rand.New(rand.NewPCG(11, 12))
	const n = 3
	for _, cols := range []int{96, 2080} { // 6 chunks; 130, more than a workgroup's
		for _, mode := range []uint32{xPlain, xNorm, xSwiGLU} {
			t.Run(fmt.Sprintf("cols%d/mode%d", cols, mode), func(t *testing.T) {
				width := cols
				if mode == xSwiGLU {
					width = 2 * cols
				}
				x := make([]float32, n*width)
				for i := range x {
					x[i] = float32(rng.NormFloat64() * math.Pow(10, 2*rng.Float64()-1))
				}
				x[5] = 0 // and a chunk of zeros
				for i := 16; i < 32; i++ {
					x[i] = 0
				}
				gain := make([]float32, cols)
				for i := range gain {
					gain[i] = float32(0.5 + rng.Float64())
				}
				const eps = 1e-6
				xb, gb := upload(t, d, F32Bytes(x)), upload(t, d, F32Bytes(gain))
				vb, mb := quantBytes(n, cols)
				xq, err := d.NewBuffer(vb + mb)
				if err != nil {
					t.Fatal(err)
				}
				defer xq.Free()
				qr := runQuantAct(t, d, mode, xb, gb, xq, cols, n, eps, uint32(cols%3)) // 96: the grid's; 2080: one row of workgroups for the 3 tokens
				v := make([]float64, cols)
				for tok := range n {
					row := x[tok*width : (tok+1)*width]
					var ss float64
					for _, a := range row[:cols] {
						ss += float64(a) * float64(a)
					}
					for c := range cols {
						a := float64(row[c])
						switch mode {
						case xNorm:
							v[c] = a / math.Sqrt(ss/float64(cols)+eps) * float64(gain[c])
						case xSwiGLU:
							v[c] = a / (1 + math.Exp(-a)) * float64(row[cols+c])
						default:
							v[c] = a
						}
					}
					for ch := range cols / 16 {
						k := tok*cols/16 + ch
						amax, sum := 0.0, 0.0
						for c := 16 * ch; c < 16*ch+16; c++ {
							amax = max(amax, math.Abs(v[c]))
							sum += float64(qr.q[tok*cols+c])
						}
						if dw := amax / 32512; math.Abs(float64(qr.d[k])-dw) > 1e-5*dw {
							t.Fatalf("token %d chunk %d: scale %g, want %g", tok, ch, qr.d[k], dw)
						}
						if sw := float64(qr.d[k]) * sum; math.Abs(float64(qr.s[k])-sw) > 1e-6*math.Abs(sw) {
							t.Fatalf("token %d chunk %d: sum %g, want %g", tok, ch, qr.s[k], sw)
						}
						for c := 16 * ch; c < 16*ch+16; c++ {
							if e := math.Abs(qr.value(cols, tok, c) - v[c]); e > 0.5001*float64(qr.d[k])+1e-5*math.Abs(v[c]) {
								t.Fatalf("token %d value %d: %g (%d steps of %g), want %g", tok, c, qr.value(cols, tok, c), qr.q[tok*cols+c], qr.d[k], v[c])
							}
						}
					}
				}
			})
		}
	}
}

// intDotTypeList is intDotTypes' keys in type-id order.
func intDotTypeList() []gguf.TensorType {
	var ts []gguf.TensorType
	for t := range intDotTypes {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// TestMulMVQ checks mul_mvq_<type> for every type it has: 37 rows and 3
// (fewer than a tile), 1, 3, 8 and 17 tokens, adding and storing, with
// mul_mv's specialization choices and clamped grids (mulMVCases), against
// numfmt's decoding times the quantized activations (quant_act's, read
// back) in float64: within 4e-5 of the sum over the row of |x|*max|w|
// (the dot products are exact, the scales' products float32); and against
// mul_mv of the float activations within what the quantization allows
// (half a step of each value times |w|) and float32 rounding; and
// mul_mvq quantizing its float input itself (FUSED) against it on
// quant_act's, within float32 rounding (the same integers).
func TestMulMVQ(t *testing.T) {
	d := intDotDevice(t)
	sg := d.SubgroupSize
	specs := mulMVSpecs(sg)
	const maxN = 17
	for ti, typ := range intDotTypeList() {
		t.Run(typ.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(typ), 17))
			cols := testCols(typ)
			x := make([]float32, maxN*cols)
			for i := range x {
				x[i] = float32(2*rng.Float64() - 1)
			}
			xbuf := upload(t, d, F32Bytes(x))
			vb, mb := quantBytes(maxN, cols)
			xq, err := d.NewBuffer(vb + mb)
			if err != nil {
				t.Fatal(err)
			}
			defer xq.Free()
			qr := runQuantAct(t, d, xPlain, xbuf, nil, xq, cols, maxN, 0, 0)
			chosen := [][3]uint32{specs[(2*ti)%len(specs)], specs[(2*ti+1)%len(specs)], mulMVQSpec(sg, 37, cols, 3)}
			if testing.Short() {
				chosen = chosen[2:]
			}
			for _, rows := range []int{37, 3} {
				w := newWeightMatrix(t, d, rng, typ, rows, cols)
				for _, spec := range chosen {
					checkMulMVQ(t, d, rng, w, x, qr, xbuf, xq, spec)
				}
			}
		})
	}
}

// checkMulMVQ runs mul_mvq of w (and mul_mv for the comparison with float
// activations, and mul_mvq quantizing x itself) with spec for every
// mulMVCase, in one command buffer, and compares (TestMulMVQ). y's
// padding (rows..ldy) and the tokens past n must be left alone.
func checkMulMVQ(t *testing.T, d *Device, rng *rand.Rand, w *weightMatrix, x []float32, qr *quantRef, xbuf, xq *Buffer, spec [3]uint32) {
	t.Helper()
	name, _ := mulMVQShader(w.typ)
	p, err := d.Pipeline(name, spec[:]...)
	if err != nil {
		t.Fatal(err)
	}
	fname, _ := mulMVShader(w.typ)
	fspec := mulMVSpec(d.SubgroupSize, 8)
	pf, err := d.Pipeline(fname, fspec[:]...)
	if err != nil {
		t.Fatal(err)
	}
	const maxN = 17
	pfu, err := d.Pipeline(name, spec[0], spec[1], spec[2], 1, xPlain)
	if err != nil {
		t.Fatal(err)
	}
	ldy := w.rows + 3
	region := ldy * (maxN + 1)
	nc := len(mulMVCases)
	y0 := make([]float32, 3*region*nc) // mul_mvq's, mul_mv's, then mul_mvq's quantizing x
	for i := range y0 {
		y0[i] = float32(rng.NormFloat64())
	}
	for ci, c := range mulMVCases {
		if !c.add {
			for i := range ldy * c.n {
				y0[ci*region+i] = float32(math.NaN())
			}
		}
	}
	copy(y0[nc*region:], y0[:nc*region]) // mul_mv adds to the same
	copy(y0[2*nc*region:], y0[:nc*region])
	ybuf := upload(t, d, F32Bytes(y0))
	vb, _ := quantBytes(maxN, w.cols)
	r, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for ci, c := range mulMVCases {
		push := pushMulMVQ{W: w.buf.Addr(), XQ: xq.Addr(), XM: xq.Addr() + uint64(vb), Y: ybuf.Addr() + uint64(4*ci*region),
			Rows: uint32(w.rows), Cols: uint32(w.cols), N: uint32(c.n), RowBytes: uint32(w.rowBytes), LDY: uint32(ldy)}
		if c.add {
			push.Add = 1
		}
		gx, gy := mulMVGroups(w.rows, c.n, spec)
		if c.gx != 0 {
			gx = c.gx
		}
		if c.gy != 0 {
			gy = c.gy
		}
		r.Dispatch(p, gx, gy, 1, PushBytes(&push))
		fpush := pushMulMV{W: w.buf.Addr(), X: xbuf.Addr(), Y: ybuf.Addr() + uint64(4*(nc+ci)*region),
			Rows: uint32(w.rows), Cols: uint32(w.cols), N: uint32(c.n), RowBytes: uint32(w.rowBytes), LDY: uint32(ldy), Add: push.Add}
		fx, fy := mulMVGroups(w.rows, c.n, fspec)
		r.Dispatch(pf, fx, fy, 1, PushBytes(&fpush))
		upush := push
		upush.XQ, upush.XM, upush.X, upush.Gain = 0, 0, xbuf.Addr(), xbuf.Addr()
		upush.Y = ybuf.Addr() + uint64(4*(2*nc+ci)*region)
		r.Dispatch(pfu, gx, gy, 1, PushBytes(&upush))
	}
	if err := d.Submit(r); err != nil {
		t.Fatal(err)
	}
	y := make([]float32, len(y0))
	if err := d.Read(ybuf, 0, F32Bytes(y)); err != nil {
		t.Fatal(err)
	}
	label := fmt.Sprintf("%s %v", name, spec)
	checkMVCases(t, label, y, y0, region, ldy, maxN, w.rows, func(ci, tok, row, i int) string {
		var want, scale, quant float64
		for col := range w.cols {
			wv := float64(w.values[row*w.cols+col])
			want += wv * qr.value(w.cols, tok, col)
			scale += math.Abs(float64(x[tok*w.cols+col]))
			quant += math.Abs(wv) * 0.5 * float64(qr.d[(tok*w.cols+col)/16])
		}
		scale *= float64(w.maxAbs[row])
		if mulMVCases[ci].add {
			want += float64(y0[i])
			scale += math.Abs(float64(y0[i]))
		}
		if diff := math.Abs(float64(y[i]) - want); !(diff <= 4e-5*scale+1e-30) {
			return fmt.Sprintf("= %g, want %g (error %.3g of %.3g)", y[i], want, diff, scale)
		}
		// against mul_mv of the float activations
		yf := float64(y[(nc+ci)*region+tok*ldy+row])
		if diff := math.Abs(float64(y[i]) - yf); !(diff <= quant*1.001+4e-5*scale) {
			return fmt.Sprintf("= %g, mul_mv's %g: error %.3g over 8-bit activations' %.3g", y[i], yf, diff, quant)
		}
		// quantizing x itself
		yu := float64(y[(2*nc+ci)*region+tok*ldy+row])
		if diff := math.Abs(float64(y[i]) - yu); !(diff <= 1e-6*scale) {
			return fmt.Sprintf("= %g, fused %g: error %.3g of %.3g", y[i], yu, diff, scale)
		}
		return ""
	})
	// what the fused product leaves alone
	for k := range nc * region {
		a, b := y[2*nc*region+k], y0[2*nc*region+k]
		ci, tok, row := k/region, k%region/ldy, k%ldy
		if (tok >= mulMVCases[ci].n || row >= w.rows) && a != b && !(a != a && b != b) {
			t.Fatalf("%s fused: case %d token %d row %d = %g, was %g", label, ci, tok, row, a, b)
		}
	}
}

// TestMulMVQFused checks mul_mvq quantizing its input itself in the input
// modes RMSNorm and SwiGLU (FUSED, XMODE 1 and 2) against mul_mvq after
// quant_act in the same mode, for every type, 37 rows, 1, 3 and 8 tokens:
// the same integers, so within float32 rounding (RMSNorm's factor is
// applied to the sums there and to the scales here).
func TestMulMVQFused(t *testing.T) {
	d := intDotDevice(t)
	sg := d.SubgroupSize
	const rows, eps = 37, 1e-6
	for _, typ := range intDotTypeList() {
		t.Run(typ.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(typ), 23))
			cols := testCols(typ)
			w := newWeightMatrix(t, d, rng, typ, rows, cols)
			name, _ := mulMVQShader(typ)
			x := make([]float32, 8*2*cols)
			for i := range x {
				x[i] = float32(rng.NormFloat64() * math.Pow(10, rng.Float64()-0.5))
			}
			gain := make([]float32, cols)
			for i := range gain {
				gain[i] = float32(0.5 + rng.Float64())
			}
			xbuf, gbuf := upload(t, d, F32Bytes(x)), upload(t, d, F32Bytes(gain))
			vb, mb := quantBytes(8, cols)
			xq, err := d.NewBuffer(vb + mb)
			if err != nil {
				t.Fatal(err)
			}
			defer xq.Free()
			for _, mode := range []uint32{xNorm, xSwiGLU} {
				for _, n := range []int{1, 3, 8} {
					spec := mulMVQSpec(sg, rows, cols, n)
					qr := runQuantAct(t, d, mode, xbuf, gbuf, xq, cols, n, eps, 0)
					y := make([]float32, 2*rows*n)
					for i := range y {
						y[i] = float32(math.NaN())
					}
					ybuf := upload(t, d, F32Bytes(y))
					qv, _ := quantBytes(n, cols) // runQuantAct's layout for n tokens
					push := pushMulMVQ{W: w.buf.Addr(), XQ: xq.Addr(), XM: xq.Addr() + uint64(qv), Y: ybuf.Addr(),
						Rows: rows, Cols: uint32(cols), N: uint32(n), RowBytes: uint32(w.rowBytes), LDY: rows}
					fused := push
					fused.XQ, fused.XM, fused.X, fused.Gain, fused.Eps = 0, 0, xbuf.Addr(), gbuf.Addr(), eps
					fused.Y = ybuf.Addr() + uint64(4*rows*n)
					if mode == xSwiGLU {
						fused.XStride = uint32(2 * cols)
					}
					p, err := d.Pipeline(name, spec[:]...)
					if err != nil {
						t.Fatal(err)
					}
					pf, err := d.Pipeline(name, spec[0], spec[1], spec[2], 1, mode)
					if err != nil {
						t.Fatal(err)
					}
					r, err := d.Begin()
					if err != nil {
						t.Fatal(err)
					}
					gx, gy := mulMVGroups(rows, n, spec)
					r.Dispatch(p, gx, gy, 1, PushBytes(&push))
					r.Dispatch(pf, gx, gy, 1, PushBytes(&fused))
					if err := d.Submit(r); err != nil {
						t.Fatal(err)
					}
					if err := d.Read(ybuf, 0, F32Bytes(y)); err != nil {
						t.Fatal(err)
					}
					for tok := range n {
						for row := range rows {
							var scale float64
							for c := range cols {
								scale += math.Abs(float64(w.values[row*cols+c]) * qr.value(cols, tok, c))
							}
							a, b := y[tok*rows+row], y[rows*n+tok*rows+row]
							if diff := math.Abs(float64(a) - float64(b)); !(diff <= 2e-6*scale) {
								t.Fatalf("mode %d, %d tokens: token %d row %d: fused %g, after quant_act %g (error %.3g of %.3g)", mode, n, tok, row, b, a, diff, scale)
							}
						}
					}
				}
			}
		})
	}
}

// TestIntDotTable checks what the integer dot products' selection rests
// on: every type of intDotTypes has its embedded mul_mvq variant (and
// a mul_mv one: the float products stay for the other devices),
// quant_act is embedded, the push blocks have the shaders' sizes, and
// the choice follows Options.IntDot and what the device reports.
func TestIntDotTable(t *testing.T) {
	for _, typ := range intDotTypeList() {
		name, ok := mulMVQShader(typ)
		if _, err := spvFS.ReadFile("spv/" + name + ".spv"); !ok || err != nil {
			t.Errorf("%s: shader %q (%v): %v", typ, name, ok, err)
		}
		if _, ok := weightTypes[typ]; !ok {
			t.Errorf("%s: mul_mvq but no mul_mv", typ)
		}
	}
	for _, typ := range []gguf.TensorType{gguf.TensorF32, gguf.TensorF16, gguf.TensorBF16, gguf.TensorQ8_K} {
		if _, ok := mulMVQShader(typ); ok {
			t.Errorf("%s: a mul_mvq variant", typ)
		}
	}
	if _, err := spvFS.ReadFile("spv/quant_act.spv"); err != nil {
		t.Error(err)
	}
	// 6 addresses and 8 scalars; 4 addresses and 4 scalars.
	if s := unsafe.Sizeof(pushMulMVQ{}); s != 80 {
		t.Errorf("pushMulMVQ: %d bytes, want 80", s)
	}
	if s := unsafe.Sizeof(pushQuantAct{}); s != 48 {
		t.Errorf("pushQuantAct: %d bytes, want 48", s)
	}
	if v, m := quantBytes(3, 4096); v != 3*4096*2 || m != 3*256*8 {
		t.Errorf("quantBytes(3, 4096) = %d, %d", v, m)
	}
	for _, c := range []struct {
		dot, fast bool
		mode      IntDot
		want      bool
	}{
		{true, true, IntDotAuto, true}, {true, false, IntDotAuto, false}, {false, false, IntDotAuto, false},
		{true, false, IntDotOn, true}, {false, false, IntDotOn, false}, {true, true, IntDotOff, false},
	} {
		info := DeviceInfo{IntegerDot: c.dot, IntegerDotFast: c.fast}
		if got := useIntDot(&info, c.mode); got != c.want {
			t.Errorf("useIntDot(dot %v, accelerated %v, mode %d) = %v", c.dot, c.fast, c.mode, got)
		}
	}
}

// TestMulMVQSpec checks mulMVQSpec's local sizes: mul_mv's, halved
// while a row's units would leave half the invocations idle, never below
// a subgroup.
func TestMulMVQSpec(t *testing.T) {
	for _, c := range []struct {
		sg            uint32
		rows, cols, n int
		want          [3]uint32
	}{
		{32, 4096, 4096, 1, [3]uint32{64, 4, 1}},   // 128 units
		{32, 4096, 1024, 1, [3]uint32{32, 4, 1}},   // 32 units
		{32, 12288, 2048, 1, [3]uint32{64, 4, 1}},  // 64 units
		{32, 151936, 1024, 1, [3]uint32{32, 2, 1}}, // the head: a subgroup already
		{8, 37, 352, 3, [3]uint32{16, 2, 4}},       // 11 units
		{8, 37, 256, 3, [3]uint32{8, 2, 4}},        // 8 units
		{64, 4096, 256, 8, [3]uint32{64, 4, 8}},
	} {
		if got := mulMVQSpec(c.sg, c.rows, c.cols, c.n); got != c.want {
			t.Errorf("mulMVQSpec(%d, %d, %d, %d) = %v, want %v", c.sg, c.rows, c.cols, c.n, got, c.want)
		}
	}
}

// TestMulMVQFusedChoice checks mulMVQFused on an NVIDIA-like device
// (32-wide subgroups): a 0.6B's products fuse at one token, its output
// head does not, nor do its attention products in a batch of 8 or any
// of an 8B's, nor anything past a tile of tokens.
func TestMulMVQFusedChoice(t *testing.T) {
	for _, c := range []struct {
		rows, cols, n int
		mode          uint32
		want          bool
	}{
		{4096, 1024, 1, xNorm, true},     // 0.6B QKV: 1,024 workgroups of 8 KiB
		{1024, 2048, 1, xPlain, true},    // attention output
		{6144, 1024, 1, xNorm, true},     // gate and up: 12 MiB
		{1024, 3072, 1, xSwiGLU, true},   // down: 12 MiB
		{151936, 1024, 1, xNorm, false},  // the head
		{4096, 1024, 8, xNorm, false},    // QKV of 8 tokens: 64 MiB
		{4096, 1024, 2, xNorm, true},     // of 2: 16 MiB
		{4096, 1024, 9, xPlain, false},   // past a tile
		{4096, 14336, 1, xSwiGLU, false}, // an 8B's down: 112 MiB
		{28672, 4096, 1, xNorm, false},   // its gate and up
		{4096, 4096, 1, xPlain, false},   // its attention output: 16 MiB
		{1024, 4096, 1, xNorm, false},    // its K: 16 MiB
	} {
		spec := mulMVQSpec(32, c.rows, c.cols, c.n)
		if got := mulMVQFused(spec, c.rows, c.cols, c.n, c.mode); got != c.want {
			t.Errorf("mulMVQFused(%v, %d, %d, %d, mode %d) = %v", spec, c.rows, c.cols, c.n, c.mode, got)
		}
	}
}
