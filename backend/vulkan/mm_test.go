package vulkan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"inferno/backend/vulkan/vk"
	"inferno/gguf"
)

// mulMMCase is one dispatch of a mul_mm test: n tokens, add or store, and
// the workgroup counts (0: mulMMGroups').
type mulMMCase struct {
	n      int
	add    bool
	gx, gy uint32
}

var mulMMCases = []mulMMCase{
	{9, false, 0, 0}, {9, true, 0, 0}, {33, false, 0, 0}, {33, true, 0, 0},
	{100, false, 0, 0}, {100, true, 0, 0}, {512, false, 0, 0}, {512, true, 0, 0},
	{100, true, 1, 1}, // one workgroup: it strides over the row tiles and token tiles
}

// mulMMRef is numfmt's decoding of a weight matrix times the tokens of x
// in float64: want[t*rows + r] and the sum of the products' magnitudes.
type mulMMRef struct{ want, mag []float64 }

func newMulMMRef(w *weightMatrix, x []float32, n int) mulMMRef {
	ref := mulMMRef{want: make([]float64, n*w.rows), mag: make([]float64, n*w.rows)}
	for tok := range n {
		xt := x[tok*w.cols : (tok+1)*w.cols]
		for row := range w.rows {
			wr := w.values[row*w.cols : (row+1)*w.cols]
			var s, m float64
			for c, v := range wr {
				pr := float64(v) * float64(xt[c])
				s += pr
				m += math.Abs(pr)
			}
			ref.want[tok*w.rows+row], ref.mag[tok*w.rows+row] = s, m
		}
	}
	return ref
}

// checkMulMM runs shader name (a mul_mm variant of w's type) with
// specialization spec for every mulMMCase, in one command buffer, and
// compares y with ref: within tol of the sum of the products' magnitudes.
// y's padding (rows..ldy) and the token past n must be left alone, and a
// store must not read y (NaNs there). With sx, xbuf holds act_h's float16
// activations and sx their scales, for mul_mm_cm.
func checkMulMM(t *testing.T, d *Device, rng *rand.Rand, name string, w *weightMatrix, ref mulMMRef, xbuf, sx *Buffer, spec []uint32, grid func(rows, n int) (uint32, uint32), tol float64) {
	t.Helper()
	p, err := d.Pipeline(name, spec...)
	if err != nil {
		t.Fatal(err)
	}
	ldy := w.rows + 3
	offs := make([]int, len(mulMMCases)+1) // case ci's region: y[offs[ci]:offs[ci+1]], n+1 tokens
	for ci, c := range mulMMCases {
		offs[ci+1] = offs[ci] + ldy*(c.n+1)
	}
	y0 := make([]float32, offs[len(mulMMCases)])
	for i := range y0 {
		y0[i] = float32(rng.NormFloat64())
	}
	for ci, c := range mulMMCases {
		if !c.add {
			for i := range ldy * c.n {
				y0[offs[ci]+i] = float32(math.NaN())
			}
		}
	}
	ybuf := upload(t, d, F32Bytes(y0))
	r, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for ci, c := range mulMMCases {
		push := pushMulMM{W: w.buf.Addr(), X: xbuf.Addr(), Y: ybuf.Addr() + uint64(4*offs[ci]),
			Rows: uint32(w.rows), Cols: uint32(w.cols), N: uint32(c.n), RowBytes: uint32(w.rowBytes), LDY: uint32(ldy)}
		if c.add {
			push.Add = 1
		}
		if sx != nil {
			push.SX = sx.Addr()
		}
		gx, gy := grid(w.rows, c.n)
		if c.gx != 0 {
			gx, gy = c.gx, c.gy
		}
		r.Dispatch(p, gx, gy, 1, PushBytes(&push))
	}
	if err := d.Submit(r); err != nil {
		t.Fatal(err)
	}
	y := make([]float32, len(y0))
	if err := d.Read(ybuf, 0, F32Bytes(y)); err != nil {
		t.Fatal(err)
	}
	var worst float64
	for ci, c := range mulMMCases {
		bad := 0
		for tok := range c.n + 1 {
			for row := range ldy {
				i := offs[ci] + tok*ldy + row
				if tok >= c.n || row >= w.rows {
					if math.Float32bits(y[i]) != math.Float32bits(y0[i]) {
						t.Errorf("%s %v %+v: y[token %d, %d] (outside) changed from %g to %g", name, spec, c, tok, row, y0[i], y[i])
						bad++
					}
					continue
				}
				want, mag := ref.want[tok*w.rows+row], ref.mag[tok*w.rows+row]
				if c.add {
					want += float64(y0[i])
					mag += math.Abs(float64(y0[i]))
				}
				diff := math.Abs(float64(y[i]) - want)
				if mag > 0 {
					worst = max(worst, diff/mag)
				}
				if !(diff <= tol*mag+1e-30) {
					t.Errorf("%s %v %+v: y[token %d, row %d] = %g, want %g (error %.3g of %.3g)", name, spec, c, tok, row, y[i], want, diff, mag)
					bad++
				}
				if bad > 5 {
					t.FailNow()
				}
			}
		}
	}
	t.Logf("%s %v: largest error %.3g of the magnitudes' sum", name, spec, worst)
}

// mulMMExtraSpecs are specializations beside mulMMSpec's choices: BK of
// one unit and of four, TM != TN, the GPU choice on any device.
var mulMMExtraSpecs = [][6]uint32{
	{32, 32, 16, 16, 4, 4}, {64, 32, 32, 64, 4, 4}, {128, 64, 32, 32, 8, 2}, {256, 64, 64, 32, 4, 4},
}

// TestMulMM checks mul_mm_<type> (within 1e-5 of the magnitudes' sum, as
// mul_mv) for every weight format against numfmt's decoding: 100 rows (no
// multiple of the tiles) and 5 (fewer than a tile), 9, 33, 100 and 512
// tokens, adding and storing. Each format runs mulMMSpec's choice and one
// of mulMMExtraSpecs in turn; with -short, mulMMSpec's only. Where the
// device has cooperative matrices, mul_mm_cm_<type> too over act_h's
// activations (within mulMMCMTol), with mulMMCMSpec's choice and with
// tiles of one subgroup and one unit a step.
func TestMulMM(t *testing.T) {
	d := testDevice(t)
	for ti, typ := range weightTypeList() {
		t.Run(typ.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(typ), 11))
			cols := testCols(typ)
			w := newWeightMatrix(t, d, rng, typ, 100, cols)
			small := newWeightMatrix(t, d, rng, typ, 5, cols)
			x := make([]float32, 512*cols)
			for i := range x {
				x[i] = float32(2*rng.Float64() - 1)
			}
			xbuf := upload(t, d, F32Bytes(x))
			ref, refSmall := newMulMMRef(w, x, 512), newMulMMRef(small, x, 512)

			name, _ := mulMMShader(typ)
			check := func(w *weightMatrix, ref mulMMRef, spec [6]uint32) {
				checkMulMM(t, d, rng, name, w, ref, xbuf, nil, spec[:], func(rows, n int) (uint32, uint32) { return mulMMGroups(rows, n, spec) }, 1e-5)
			}
			spec := mulMMSpec(d.SubgroupSize, d.SharedMemory)
			check(w, ref, spec)
			check(small, refSmall, spec)
			if !testing.Short() {
				check(w, ref, mulMMExtraSpecs[ti%len(mulMMExtraSpecs)])
			}
			cm, ok := mulMMCMShader(typ)
			if !ok || !d.CoopMatrix {
				return
			}
			xh, sx := runActH(t, d, xbuf, 512, cols)
			checkCM := func(w *weightMatrix, ref mulMMRef, spec [8]uint32) {
				checkMulMM(t, d, rng, cm, w, ref, xh, sx, spec[:], func(rows, n int) (uint32, uint32) { return mulMMCMGroups(rows, n, spec) }, mulMMCMTol)
			}
			cspec := mulMMCMSpec(d.SubgroupSize, d.SharedMemory, d.CoopShape)
			checkCM(w, ref, cspec)
			checkCM(small, refSmall, cspec)
			if !testing.Short() { // one unit a step, a subgroup a tile, without and with the prefetch
				s := cspec
				s[cmBK], s[cmBM], s[cmBN], s[cmLocal] = 16, 2*s[cmTM], 2*s[cmTN], d.SubgroupSize
				for _, pf := range []uint32{0, 1} {
					s[cmPrefetch] = pf
					checkCM(w, ref, s)
				}
			}
		})
	}
}

// mulMMCMTol is mul_mm_cm's bound on an output's error, of the sum of its
// products' magnitudes: each product's two factors rounded to float16
// (a relative error of 2^-11 each, 9.8e-4 together at most), float32
// sums.
const mulMMCMTol = 1.2e-3

// TestMulMMChoice checks the Go side of mul_mm without a device: a
// variant of each for every format (embedded), the specializations the
// devices of the table get (shapes the shader computes right, slabs
// within the shared memory) and the grid.
func TestMulMMChoice(t *testing.T) {
	for _, typ := range weightTypeList() {
		name, ok := mulMMShader(typ)
		if _, err := spvFS.ReadFile("spv/" + name + ".spv"); !ok || err != nil {
			t.Errorf("%s: shader %q (%v): %v", typ, name, ok, err)
		}
	}
	if _, ok := mulMMShader(gguf.TensorQ8_K); ok {
		t.Error("a matrix-matrix shader for Q8_K")
	}
	for _, c := range []struct {
		name       string
		size, want uintptr
	}{
		{"pushMulMM", unsafe.Sizeof(pushMulMM{}), 56}, // 3 addresses, 6 scalars, an address
		{"pushActH", unsafe.Sizeof(pushActH{}), 32},   // 3 addresses, 2 scalars
	} {
		if c.size != c.want {
			t.Errorf("%s: %d bytes, want %d", c.name, c.size, c.want)
		}
	}
	if _, err := spvFS.ReadFile("spv/act_h.spv"); err != nil {
		t.Error(err)
	}
	for _, dev := range []struct {
		name       string
		sg, shared uint32
	}{
		{"lavapipe", 8, 32 << 10}, {"NVIDIA", 32, 48 << 10}, {"AMD wave64", 64, 64 << 10}, {"AMD wave32", 32, 64 << 10},
		{"Intel", 16, 64 << 10}, {"Apple", 32, 32 << 10}, {"Vulkan's minimum", 4, 16 << 10},
	} {
		s := mulMMSpec(dev.sg, dev.shared)
		bm, bn, bk, tm, tn := s[mmBM], s[mmBN], s[mmBK], s[mmTM], s[mmTN]
		where := fmt.Sprintf("%s (subgroup %d, %d KiB): %v", dev.name, dev.sg, dev.shared>>10, s)
		if bk < 16 || bk%16 != 0 {
			t.Errorf("%s: BK not a multiple of 16", where)
		}
		if mulMMShared(s) > int(dev.shared) {
			t.Errorf("%s: %d bytes of shared memory", where, mulMMShared(s))
		}
		if bm%tm != 0 || bn%tn != 0 || s[mmLocal] != (bm/tm)*(bn/tn) {
			t.Errorf("%s: not an invocation a %d x %d part", where, tm, tn)
		}
	}
	for _, c := range []struct {
		sg, shared uint32
		want       [6]uint32
	}{
		{32, 48 << 10, [6]uint32{256, 64, 64, 32, 4, 4}},
		{8, 32 << 10, [6]uint32{64, 32, 32, 32, 4, 4}},
		{32, 16 << 10, [6]uint32{64, 32, 32, 32, 4, 4}},
		{4, 8 << 10, [6]uint32{64, 32, 32, 16, 4, 4}},
	} {
		if got := mulMMSpec(c.sg, c.shared); got != c.want {
			t.Errorf("mulMMSpec(%d, %d) = %v, want %v", c.sg, c.shared, got, c.want)
		}
	}
	if x, y := mulMMGroups(151936, 100, [6]uint32{256, 2, 64, 32, 1, 1}); x != maxGroups || y != 2 {
		t.Errorf("mulMMGroups: %d x %d, want %d x 2", x, y, maxGroups)
	}
	// mul_mm_cm: a variant for every format but float32, and its
	// specializations on the devices of the table.
	for _, typ := range weightTypeList() {
		name, ok := mulMMCMShader(typ)
		if typ == gguf.TensorF32 {
			if ok {
				t.Errorf("a cooperative-matrix shader for F32: %s", name)
			}
			continue
		}
		if _, err := spvFS.ReadFile("spv/" + name + ".spv"); !ok || err != nil {
			t.Errorf("%s: shader %q (%v): %v", typ, name, ok, err)
		}
	}
	for _, dev := range []struct {
		name       string
		sg, shared uint32
		shape      [3]uint32
	}{
		{"NVIDIA", 32, 48 << 10, [3]uint32{16, 16, 16}}, {"AMD wave64", 64, 64 << 10, [3]uint32{16, 16, 16}},
		{"Intel", 16, 64 << 10, [3]uint32{8, 16, 16}}, {"small", 32, 16 << 10, [3]uint32{16, 8, 8}},
	} {
		s := mulMMCMSpec(dev.sg, dev.shared, dev.shape)
		where := fmt.Sprintf("%s (subgroup %d, %d KiB, %v): %v", dev.name, dev.sg, dev.shared>>10, dev.shape, s)
		if bk := s[cmBK]; bk < 16 || bk%16 != 0 || bk%s[cmTK] != 0 {
			t.Errorf("%s: BK not a multiple of 16 and of K", where)
		}
		if mulMMCMShared(s) > int(dev.shared) {
			t.Errorf("%s: %d bytes of shared memory", where, mulMMCMShared(s))
		}
		if s[cmBM]%(2*s[cmTM]) != 0 || s[cmBN]%(2*s[cmTN]) != 0 {
			t.Errorf("%s: the subgroups' 2 x 2 products do not tile the tile", where)
		}
		if s[cmLocal] != (s[cmBM]/(2*s[cmTM]))*(s[cmBN]/(2*s[cmTN]))*dev.sg {
			t.Errorf("%s: not a subgroup a part", where)
		}
	}
	if x, y := mulMMCMGroups(100, 512, [8]uint32{128, 64, 64, 64, 16, 16, 16, 1}); x != 2 || y != 8 {
		t.Errorf("mulMMCMGroups: %d x %d, want 2 x 8", x, y)
	}
}

// TestCoopShape checks the choice of the cooperative product's shape
// among what a driver lists.
func TestCoopShape(t *testing.T) {
	sh := func(m, n, k, a, c, scope uint32) vk.CooperativeMatrixPropertiesKHR {
		return vk.CooperativeMatrixPropertiesKHR{MSize: m, NSize: n, KSize: k, AType: a, BType: a, CType: c, ResultType: c, Scope: scope}
	}
	const f16, f32, sub = vk.ComponentTypeFloat16, vk.ComponentTypeFloat32, vk.ScopeSubgroup
	for _, c := range []struct {
		shapes []vk.CooperativeMatrixPropertiesKHR
		want   [3]uint32
		ok     bool
	}{
		{nil, [3]uint32{}, false},
		{[]vk.CooperativeMatrixPropertiesKHR{sh(16, 16, 16, f16, f16, sub), sh(16, 8, 16, f16, f32, sub), sh(16, 16, 16, f16, f32, sub), sh(16, 8, 8, f16, f32, sub)}, [3]uint32{16, 16, 16}, true},
		{[]vk.CooperativeMatrixPropertiesKHR{sh(16, 8, 8, f16, f32, sub), sh(8, 16, 16, f16, f32, sub), sh(16, 8, 16, f16, f32, sub)}, [3]uint32{16, 8, 16}, true},
		{[]vk.CooperativeMatrixPropertiesKHR{sh(32, 32, 16, f16, f32, sub), sh(16, 16, 16, f16, f32, 2), sh(16, 16, 32, f16, f32, sub), sh(16, 16, 16, 5, 7, sub)}, [3]uint32{}, false},
	} {
		if got, ok := coopShape(c.shapes); got != c.want || ok != c.ok {
			t.Errorf("coopShape(%v) = %v %v, want %v %v", c.shapes, got, ok, c.want, c.ok)
		}
	}
}

// BenchmarkMulMM measures the prompt product on a 1024 x 1024 Q8_0 matrix
// (0.6B's projections) and a 4096 x 4096 Q4_K one (8B's) times 512 tokens,
// and on the Q4_K one for 9, 16 and 64 tokens (where the passes switch
// from mul_mv): mul_mv (the tiles of 8 tokens the passes used before)
// and mul_mm, each with its choice of specialization, and mul_mm_cm where
// the device has cooperative matrices. Each iteration
// submits 20 dispatches separated by barriers; it reports the weight bytes per second (B/s) and
// the arithmetic (TFLOPS, 2 rows cols n a dispatch).
func BenchmarkMulMM(b *testing.B) {
	d := testDevice(b)
	for _, m := range []struct {
		typ        gguf.TensorType
		rows, cols int
		ns         []int
	}{
		{gguf.TensorQ8_0, 1024, 1024, []int{512}},
		{gguf.TensorQ4_K, 4096, 4096, []int{9, 16, 64, 512}},
	} {
		w, rb, size, x, y := benchMMOperands(b, d, m.typ, m.rows, m.cols, 512)
		kinds := []string{"mv", "mm"}
		var sx *Buffer
		if _, ok := mulMMCMShader(m.typ); ok && d.CoopMatrix {
			kinds = append(kinds, "act_h", "cm")
			sx = benchScales(b, d, 512)
		}
		for _, n := range m.ns {
			for _, kind := range kinds {
				var name string
				var spec []uint32
				var gx, gy uint32
				switch kind {
				case "mv":
					name, _ = mulMVShader(m.typ)
					s := mulMVSpec(d.SubgroupSize, n)
					gx, gy = mulMVGroups(m.rows, n, s)
					spec = s[:]
				case "act_h":
					name, spec = "act_h", []uint32{rowWG(m.cols/4, d.SubgroupSize)}
					gx, gy = groups2D(n, 1)
				case "cm":
					name, _ = mulMMCMShader(m.typ)
					s := mulMMCMSpec(d.SubgroupSize, d.SharedMemory, d.CoopShape)
					gx, gy = mulMMCMGroups(m.rows, n, s)
					spec = s[:]
				default:
					name, _ = mulMMShader(m.typ)
					s := mulMMSpec(d.SubgroupSize, d.SharedMemory)
					gx, gy = mulMMGroups(m.rows, n, s)
					spec = s[:]
				}
				push := PushBytes(&pushMulMM{W: w.Addr(), X: x.Addr(), Y: y.Addr(), Rows: uint32(m.rows), Cols: uint32(m.cols), N: uint32(n),
					RowBytes: uint32(rb), LDY: uint32(m.rows)})
				switch kind {
				case "mv":
					push = PushBytes(&pushMulMV{W: w.Addr(), X: x.Addr(), Y: y.Addr(), Rows: uint32(m.rows), Cols: uint32(m.cols), N: uint32(n),
						RowBytes: uint32(rb), LDY: uint32(m.rows)})
				case "act_h": // x's first n tokens (ones) into y's bytes
					push = PushBytes(&pushActH{X: x.Addr(), XH: y.Addr(), SX: y.Addr() + uint64(halfScales(n, m.cols)), Cols: uint32(m.cols), N: uint32(n)})
				case "cm":
					push = PushBytes(&pushMulMM{W: w.Addr(), X: x.Addr(), Y: y.Addr(), Rows: uint32(m.rows), Cols: uint32(m.cols), N: uint32(n),
						RowBytes: uint32(rb), LDY: uint32(m.rows), SX: sx.Addr()})
				}
				b.Run(fmt.Sprintf("%s/%dx%d/n=%d/%s", m.typ, m.rows, m.cols, n, kind), func(b *testing.B) {
					if kind == "act_h" { // its bytes: read float32, write float16
						benchProduct(b, d, name, spec, gx, gy, push, 0, 0, 0, 6*n*m.cols)
						return
					}
					benchProduct(b, d, name, spec, gx, gy, push, m.rows, m.cols, n, size)
				})
			}
		}
	}
}

// benchMMOperands makes the operands of a product benchmark: a weight
// matrix of rows x cols random values of typ (benchWeights: its buffer, a
// row's bytes, its bytes), n tokens of activations (ones) and their
// outputs, freed when b's benchmark ends.
func benchMMOperands(b *testing.B, d *Device, typ gguf.TensorType, rows, cols, n int) (w *Buffer, rowBytes, size int, x, y *Buffer) {
	b.Helper()
	w, rowBytes, size = benchWeights(b, d, typ, rows, cols)
	x, err := d.NewBuffer(int64(n * cols * 4))
	if err != nil {
		b.Fatal(err)
	}
	y, err = d.NewBuffer(int64(n * rows * 4))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Free(); x.Free(); y.Free() })
	if err := d.Fill(x, 0, x.Size(), 0x3c003c00); err != nil {
		b.Fatal(err)
	}
	return w, rowBytes, size, x, y
}

// benchScales returns a buffer of n float32 ones (the scales of the
// cooperative products' benchmarks, whose float16 activations are ones:
// benchMMOperands' fill), freed when b's benchmark ends.
func benchScales(b *testing.B, d *Device, n int) *Buffer {
	b.Helper()
	sx, err := d.NewBuffer(int64(4 * n))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(sx.Free)
	if err := d.Fill(sx, 0, sx.Size(), 0x3f800000); err != nil {
		b.Fatal(err)
	}
	return sx
}

// benchProduct runs shader name with spec on a grid of gx x gy workgroups
// and push constants push, benchBatches' iterations of 20 dispatches
// separated by barriers, for a product of rows x cols weights (size
// bytes, reported as B/s where not 0) by n tokens: its arithmetic
// reported as TFLOPS (2 rows cols n a dispatch; none for 0).
func benchProduct(b *testing.B, d *Device, name string, spec []uint32, gx, gy uint32, push []byte, rows, cols, n, size int) {
	const batch = 20
	p, err := d.Pipeline(name, spec...)
	if err != nil {
		b.Fatal(err)
	}
	if size > 0 {
		b.SetBytes(int64(size) * batch)
	}
	start := time.Now()
	iters := benchBatches(b, d, batch, func(r *Recorder) {
		r.Dispatch(p, gx, gy, 1, push)
		r.Barrier()
	})
	if flops := 2 * float64(rows) * float64(cols) * float64(n) * batch * float64(iters); flops > 0 {
		b.ReportMetric(flops/time.Since(start).Seconds()/1e12, "TFLOPS")
	}
}

// BenchmarkMulMMCM measures mul_mm_cm's tiles on the prompt products of
// the 0.6B (1024 x 1024 and 6144 x 1024 Q8_0) and the 8B (4096 x 4096 and
// 24576 x 4096 Q4_K) at 512 tokens, for specializations around
// mulMMCMSpec's choice (BM, BN, BK, PREFETCH; each subgroup's part 2 x 2
// products): larger tiles, more subgroups a tile, shorter steps, without
// the prefetch. Reported as TFLOPS (2 rows cols n a dispatch, 20
// dispatches separated by barriers an iteration).
func BenchmarkMulMMCM(b *testing.B) {
	d := testDevice(b)
	if !d.CoopMatrix {
		b.Skip("no cooperative matrices")
	}
	const n = 512
	for _, m := range []struct {
		typ        gguf.TensorType
		rows, cols int
	}{
		{gguf.TensorQ8_0, 1024, 1024}, {gguf.TensorQ8_0, 6144, 1024}, {gguf.TensorQ4_K, 4096, 4096}, {gguf.TensorQ4_K, 24576, 4096},
	} {
		w, rb, _, x, y := benchMMOperands(b, d, m.typ, m.rows, m.cols, n)
		sx := benchScales(b, d, n)
		name, _ := mulMMCMShader(m.typ)
		sh := d.CoopShape
		for _, t := range [][4]uint32{
			{64, 64, 64, 1}, {64, 64, 64, 0}, {64, 64, 32, 1}, {64, 64, 32, 0}, {64, 64, 128, 1},
			{128, 64, 64, 1}, {64, 128, 64, 1}, {128, 128, 32, 1}, {64, 32, 64, 1}, {32, 64, 64, 1}, {32, 32, 64, 1},
		} {
			s := [8]uint32{0, t[0], t[1], t[2], sh[0], sh[1], sh[2], t[3]}
			s[cmLocal] = mulMMCMSubgroups(s) * d.SubgroupSize
			if mulMMCMShared(s) > int(d.SharedMemory) {
				continue
			}
			push := PushBytes(&pushMulMM{W: w.Addr(), X: x.Addr(), Y: y.Addr(), Rows: uint32(m.rows), Cols: uint32(m.cols), N: n,
				RowBytes: uint32(rb), LDY: uint32(m.rows), SX: sx.Addr()})
			gx, gy := mulMMCMGroups(m.rows, n, s)
			b.Run(fmt.Sprintf("%s/%dx%d/%v", m.typ, m.rows, m.cols, t), func(b *testing.B) {
				benchProduct(b, d, name, s[:], gx, gy, push, m.rows, m.cols, n, 0)
			})
		}
	}
}
