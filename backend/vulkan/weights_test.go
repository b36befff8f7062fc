package vulkan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"inferno/gguf"
	"inferno/numfmt"
)

// weightTypeList is weightTypes' keys in type-id order.
func weightTypeList() []gguf.TensorType {
	var ts []gguf.TensorType
	for t := range weightTypes {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// weightMatrix is a random matrix encoded in a weight format by numfmt's
// quantizer, with numfmt's decoding of it (the reference).
type weightMatrix struct {
	typ        gguf.TensorType
	rows, cols int
	rowBytes   int
	data       []byte
	values     []float32 // rows*cols, numfmt's dequantization of data
	maxAbs     []float32 // per row: the largest |value|
	buf        *Buffer
}

// newWeightMatrix quantizes random rows (normal values, each row with its
// own scale over three orders of magnitude) to typ and uploads them.
func newWeightMatrix(t *testing.T, d *Device, rng *rand.Rand, typ gguf.TensorType, rows, cols int) *weightMatrix {
	t.Helper()
	rb, ok := typ.RowBytes(uint64(cols))
	if !ok {
		t.Fatalf("%s: no row size for %d values", typ, cols)
	}
	w := &weightMatrix{typ: typ, rows: rows, cols: cols, rowBytes: int(rb)}
	src := make([]float32, cols)
	w.values = make([]float32, rows*cols)
	w.maxAbs = make([]float32, rows)
	for r := range rows {
		scale := math.Pow(10, 3*rng.Float64()-2)
		for c := range src {
			src[c] = float32(rng.NormFloat64() * scale)
		}
		var err error
		if w.data, err = numfmt.QuantizeRow(w.data, src, typ); err != nil {
			t.Fatal(err)
		}
		row := w.values[r*cols : (r+1)*cols]
		if err := numfmt.DequantizeRow(row, w.data[r*w.rowBytes:], typ, cols); err != nil {
			t.Fatal(err)
		}
		for _, v := range row {
			w.maxAbs[r] = max(w.maxAbs[r], float32(math.Abs(float64(v))))
		}
	}
	if len(w.data) != rows*w.rowBytes {
		t.Fatalf("%s: %d bytes for %d rows of %d", typ, len(w.data), rows, w.rowBytes)
	}
	w.buf = upload(t, d, w.data)
	return w
}

// upload copies b into a new device buffer, freed when the test ends.
func upload(t *testing.T, d *Device, b []byte) *Buffer {
	t.Helper()
	buf, err := d.NewBuffer(int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(buf.Free)
	if err := d.Write(buf, 0, b); err != nil {
		t.Fatal(err)
	}
	return buf
}

// testCols is the row length the tests use for typ: several blocks, a
// number of 16-value units that the local sizes used do not all divide.
func testCols(typ gguf.TensorType) int {
	switch b := weightBlock(typ); b {
	case 16:
		return 27 * 16
	case 32:
		return 11 * 32
	default:
		return 5 * b
	}
}

// mulMVCase is one dispatch of a mulMV test: n tokens, add or store, and
// the workgroup counts (0: mulMVGroups').
type mulMVCase struct {
	n      int
	add    bool
	gx, gy uint32
}

var mulMVCases = []mulMVCase{
	{1, false, 0, 0}, {1, true, 0, 0}, {3, false, 0, 0}, {3, true, 0, 0},
	{8, false, 0, 0}, {8, true, 0, 0}, {17, false, 0, 0}, {17, true, 0, 0},
	{8, false, 2, 0}, // fewer workgroups than row tiles: they stride
	{17, true, 0, 1}, // and than token groups
}

// checkMulMV runs mul_mv of w with specialization spec for every
// mulMVCase, in one command buffer, and compares y with numfmt's
// decoding times x in float64: within 1e-5 of the sum of the products'
// magnitudes (float32 accumulation). y's padding (rows..ldy) and the
// tokens past n must be left alone.
func checkMulMV(t *testing.T, d *Device, rng *rand.Rand, w *weightMatrix, x []float32, xbuf *Buffer, spec [3]uint32) {
	t.Helper()
	name, _ := mulMVShader(w.typ)
	p, err := d.Pipeline(name, spec[:]...)
	if err != nil {
		t.Fatal(err)
	}
	const maxN = 17
	ldy := w.rows + 3
	region := ldy * (maxN + 1) // one token more: must stay untouched
	y0 := make([]float32, region*len(mulMVCases))
	for i := range y0 {
		y0[i] = float32(rng.NormFloat64())
	}
	for ci, c := range mulMVCases {
		if !c.add { // a store must not read y
			for i := range ldy * c.n {
				y0[ci*region+i] = float32(math.NaN())
			}
		}
	}
	ybuf := upload(t, d, F32Bytes(y0))
	r, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for ci, c := range mulMVCases {
		push := pushMulMV{W: w.buf.Addr(), X: xbuf.Addr(), Y: ybuf.Addr() + uint64(4*ci*region),
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
		c := mulMVCases[ci]
		var want, mag float64
		for col := range w.cols {
			pr := float64(w.values[row*w.cols+col]) * float64(x[tok*w.cols+col])
			want += pr
			mag += math.Abs(pr)
		}
		if c.add {
			want += float64(y0[i])
			mag += math.Abs(float64(y0[i]))
		}
		if diff := math.Abs(float64(y[i]) - want); !(diff <= 1e-5*mag+1e-30) {
			return fmt.Sprintf("= %g, want %g (error %.3g of %.3g)", y[i], want, diff, mag)
		}
		return ""
	})
}

// checkMVCases checks a product test's outputs y (y0 before) for each
// of mulMVCases, case ci's ldy-value rows of maxN+1 tokens from
// ci*region: a value outside the case's tokens and rows (rows rows) left
// as it was, and each other value by check (its index i in y), which
// returns what is wrong or "". A case stops the test after 5 errors.
func checkMVCases(t *testing.T, label string, y, y0 []float32, region, ldy, maxN, rows int, check func(ci, tok, row, i int) string) {
	t.Helper()
	for ci, c := range mulMVCases {
		bad := 0
		for tok := range maxN + 1 {
			for row := range ldy {
				i := ci*region + tok*ldy + row
				if tok >= c.n || row >= rows {
					if math.Float32bits(y[i]) != math.Float32bits(y0[i]) {
						t.Errorf("%s %+v: y[token %d, %d] (outside) changed from %g to %g", label, c, tok, row, y0[i], y[i])
						bad++
					}
				} else if msg := check(ci, tok, row, i); msg != "" {
					t.Errorf("%s %+v: y[token %d, row %d] %s", label, c, tok, row, msg)
					bad++
				}
				if bad > 5 {
					t.FailNow()
				}
			}
		}
	}
}

// mulMVSpecs are the specialization choices tested: rows 1, 2, 4 a
// workgroup, tokens 1, 4, 8, local size one and two subgroups.
func mulMVSpecs(sg uint32) [][3]uint32 {
	var specs [][3]uint32
	for _, local := range []uint32{sg, 2 * sg} {
		for _, rows := range []uint32{1, 2, 4} {
			for _, tokens := range []uint32{1, 4, 8} {
				specs = append(specs, [3]uint32{local, rows, tokens})
			}
		}
	}
	return specs
}

// TestMulMV checks mul_mv_<type> for every weight format against numfmt's
// decoding: 37 rows (not a multiple of the row tiles) and 3 rows (fewer
// than a tile), 1, 3, 8 and 17 tokens, adding and storing. Each format
// runs three of the 18 choices of mulMVSpecs (together they cover each
// twice or more: a pipeline costs lavapipe a quarter of a second to
// compile), three subgroups a workgroup, and mulMVSpec's choice for 3
// tokens; with -short, only the last.
func TestMulMV(t *testing.T) {
	d := testDevice(t)
	sg := d.SubgroupSize
	specs := mulMVSpecs(sg)
	for ti, typ := range weightTypeList() {
		t.Run(typ.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(typ), 7))
			cols := testCols(typ)
			w := newWeightMatrix(t, d, rng, typ, 37, cols)
			x := make([]float32, 17*cols)
			for i := range x {
				x[i] = float32(2*rng.Float64() - 1)
			}
			xbuf := upload(t, d, F32Bytes(x))
			var chosen [][3]uint32
			for k := range 3 {
				chosen = append(chosen, specs[(3*ti+k)%len(specs)])
			}
			chosen = append(chosen, [3]uint32{3 * sg, 2, 4}, mulMVSpec(sg, 3))
			if testing.Short() {
				chosen = [][3]uint32{mulMVSpec(sg, 3)}
			}
			for _, spec := range chosen {
				checkMulMV(t, d, rng, w, x, xbuf, spec)
			}
			small := newWeightMatrix(t, d, rng, typ, 3, cols)
			checkMulMV(t, d, rng, small, x, xbuf, [3]uint32{sg, 4, 8})
		})
	}
}

// TestGetRows checks get_rows_<type> for every weight format against
// numfmt's decoding, within one rounding of the largest value of the row
// (a driver may fuse a decoding's product and sum), with mulMV's row
// counts: the workgroups of getRowsGroups and 4 rows of workgroups that
// stride over 19 ids.
func TestGetRows(t *testing.T) {
	d := testDevice(t)
	for _, typ := range weightTypeList() {
		t.Run(typ.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(typ), 11))
			cols := testCols(typ)
			w := newWeightMatrix(t, d, rng, typ, 37, cols)
			const n = 19
			ids := make([]int32, n)
			for i := range ids {
				ids[i] = int32(rng.IntN(w.rows))
			}
			ids[0], ids[n-1] = 0, int32(w.rows-1)
			idbuf := upload(t, d, I32Bytes(ids))
			for _, local := range []uint32{getRowsSpec(d.SubgroupSize), d.SubgroupSize} {
				name, _ := getRowsShader(typ)
				p, err := d.Pipeline(name, local)
				if err != nil {
					t.Fatal(err)
				}
				out := make([]float32, 2*n*cols+8)
				for i := range out {
					out[i] = float32(math.NaN())
				}
				obuf := upload(t, d, F32Bytes(out))
				r, err := d.Begin()
				if err != nil {
					t.Fatal(err)
				}
				gx, gy := getRowsGroups(cols, n, local)
				for k, groupsY := range []uint32{gy, 4} {
					push := pushGetRows{W: w.buf.Addr(), IDs: idbuf.Addr(), Out: obuf.Addr() + uint64(4*k*n*cols),
						Cols: uint32(cols), RowBytes: uint32(w.rowBytes), N: n}
					r.Dispatch(p, gx, groupsY, 1, PushBytes(&push))
				}
				if err := d.Submit(r); err != nil {
					t.Fatal(err)
				}
				if err := d.Read(obuf, 0, F32Bytes(out)); err != nil {
					t.Fatal(err)
				}
				for k := range 2 {
					for i, id := range ids {
						want := w.values[int(id)*cols : (int(id)+1)*cols]
						got := out[(k*n+i)*cols : (k*n+i+1)*cols]
						tol := float64(w.maxAbs[id]) * 0x1p-23
						for c := range want {
							if diff := math.Abs(float64(got[c]) - float64(want[c])); !(diff <= tol) {
								t.Fatalf("%s local %d dispatch %d: out[%d][%d] (row %d) = %g, want %g", name, local, k, i, c, id, got[c], want[c])
							}
						}
					}
				}
				for i := 2 * n * cols; i < len(out); i++ {
					if !math.IsNaN(float64(out[i])) {
						t.Fatalf("%s: out[%d] past the rows written: %g", name, i, out[i])
					}
				}
			}
		})
	}
}

// TestWeightShaderTable checks the Go side of the weight shaders: a
// variant of each shader for every format (embedded), push blocks of the
// shaders' sizes, and the workgroup shapes.
func TestWeightShaderTable(t *testing.T) {
	for _, typ := range weightTypeList() {
		if _, ok := numfmt.FormatOf(typ); !ok {
			t.Errorf("%s: no numfmt format", typ)
		}
		for _, f := range []func(gguf.TensorType) (string, bool){mulMVShader, getRowsShader} {
			name, ok := f(typ)
			if _, err := spvFS.ReadFile("spv/" + name + ".spv"); !ok || err != nil {
				t.Errorf("%s: shader %q (%v): %v", typ, name, ok, err)
			}
		}
		if err := checkWeightRows(typ, testCols(typ)); err != nil {
			t.Error(err)
		}
		if err := checkWeightRows(typ, weightBlock(typ)+4); err == nil {
			t.Errorf("%s: rows of %d values accepted", typ, weightBlock(typ)+4)
		}
	}
	if _, ok := mulMVShader(gguf.TensorQ8_K); ok {
		t.Error("a matrix-vector shader for Q8_K")
	}
	if err := checkWeightRows(gguf.TensorIQ2_XXS, 256); err == nil {
		t.Error("IQ2_XXS rows accepted")
	}
	// The shaders' push blocks: 4 addresses and 8 scalars; 3 addresses
	// and 4 scalars.
	if s := unsafe.Sizeof(pushMulMV{}); s != 64 {
		t.Errorf("pushMulMV: %d bytes, want 64", s)
	}
	if s := unsafe.Sizeof(pushGetRows{}); s != 40 {
		t.Errorf("pushGetRows: %d bytes, want 40", s)
	}
	for _, c := range []struct {
		sg   uint32
		n    int
		want [3]uint32
	}{
		{32, 1, [3]uint32{64, 2, 1}}, {32, 3, [3]uint32{64, 2, 4}}, {8, 2, [3]uint32{16, 2, 2}},
		{64, 17, [3]uint32{64, 2, 8}}, {0, 5, [3]uint32{64, 2, 8}},
	} {
		if got := mulMVSpec(c.sg, c.n); got != c.want {
			t.Errorf("mulMVSpec(%d, %d) = %v, want %v", c.sg, c.n, got, c.want)
		}
	}
	if x, y := mulMVGroups(151936, 17, [3]uint32{64, 1, 8}); x != maxGroups || y != 3 {
		t.Errorf("mulMVGroups: %d x %d, want %d x 3", x, y, maxGroups)
	}
	if x, y := getRowsGroups(4096, 70000, 64); x != 4 || y != maxGroups {
		t.Errorf("getRowsGroups: %d x %d, want 4 x %d", x, y, maxGroups)
	}
}

// BenchmarkMulMV measures mul_mv's weight bandwidth in the decode product
// on a 32768 x 4096 matrix of random bytes (larger than an H100's L2
// cache in every format here) for 1 and 8 tokens, with mulMVSpec's shape:
// each iteration submits 50 dispatches separated by barriers and reports
// the weight bytes read per second.
func BenchmarkMulMV(b *testing.B) {
	d := testDevice(b)
	const rows, cols, batch = 32768, 4096, 50
	for _, typ := range []gguf.TensorType{gguf.TensorQ4_K, gguf.TensorQ8_0, gguf.TensorQ6_K, gguf.TensorQ4_0, gguf.TensorF16} {
		w, rb, size := benchWeights(b, d, typ, rows, cols)
		x, _ := d.NewBuffer(8 * cols * 4)
		y, err := d.NewBuffer(8 * rows * 4)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Fill(x, 0, x.Size(), 0x3c003c00); err != nil {
			b.Fatal(err)
		}
		name, _ := mulMVShader(typ)
		for _, n := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/n=%d", typ, n), func(b *testing.B) {
				spec := mulMVSpec(d.SubgroupSize, n)
				p, err := d.Pipeline(name, spec[:]...)
				if err != nil {
					b.Fatal(err)
				}
				push := PushBytes(&pushMulMV{W: w.Addr(), X: x.Addr(), Y: y.Addr(), Rows: rows, Cols: cols, N: uint32(n), RowBytes: uint32(rb), LDY: rows})
				gx, gy := mulMVGroups(rows, n, spec)
				b.SetBytes(int64(size) * batch)
				benchBatches(b, d, batch, func(r *Recorder) {
					r.Dispatch(p, gx, gy, 1, push)
					r.Barrier()
				})
			})
		}
		w.Free()
		x.Free()
		y.Free()
	}
}

// BenchmarkMulMVSpec measures mul_mv's specializations on the decode
// shapes of Qwen3-0.6B (Q8_0: QKV 4096x1024, gate-up 6144x1024, down
// 1024x3072, the head 151936x1024) and 8B (Q4_K 12288x4096): GB/s of
// weights for one token, each local size and rows a workgroup, to choose
// mulMVSpec's by.
func BenchmarkMulMVSpec(b *testing.B) {
	d := testDevice(b)
	const batch = 50
	for _, c := range []struct {
		typ        gguf.TensorType
		rows, cols int
	}{
		{gguf.TensorQ8_0, 4096, 1024}, {gguf.TensorQ8_0, 6144, 1024}, {gguf.TensorQ8_0, 1024, 3072},
		{gguf.TensorQ8_0, 151936, 1024}, {gguf.TensorQ4_K, 12288, 4096},
	} {
		w, rb, size := benchWeights(b, d, c.typ, c.rows, c.cols)
		x, _ := d.NewBuffer(8 * int64(c.cols) * 4)
		y, err := d.NewBuffer(8 * int64(c.rows) * 4)
		if err != nil {
			b.Fatal(err)
		}
		name, _ := mulMVShader(c.typ)
		for _, tc := range []struct{ local, rows, tokens uint32 }{
			{d.SubgroupSize, 1, 1}, {d.SubgroupSize, 2, 1}, {d.SubgroupSize, 4, 1}, {d.SubgroupSize, 8, 1},
			{2 * d.SubgroupSize, 1, 1}, {2 * d.SubgroupSize, 2, 1}, {2 * d.SubgroupSize, 4, 1}, {2 * d.SubgroupSize, 8, 1},
			{4 * d.SubgroupSize, 2, 1}, {4 * d.SubgroupSize, 4, 1},
			{2 * d.SubgroupSize, 2, 8}, {2 * d.SubgroupSize, 4, 8}, {2 * d.SubgroupSize, 8, 8}, {2 * d.SubgroupSize, 16, 8},
			{4 * d.SubgroupSize, 4, 8}, {4 * d.SubgroupSize, 8, 8}, {4 * d.SubgroupSize, 16, 8},
		} {
			spec := [3]uint32{tc.local, tc.rows, tc.tokens}
			b.Run(fmt.Sprintf("%s/%dx%d/L%d/R%d/T%d", c.typ, c.rows, c.cols, tc.local, tc.rows, tc.tokens), func(b *testing.B) {
				p, err := d.Pipeline(name, spec[:]...)
				if err != nil {
					b.Fatal(err)
				}
				push := PushBytes(&pushMulMV{W: w.Addr(), X: x.Addr(), Y: y.Addr(), Rows: uint32(c.rows), Cols: uint32(c.cols), N: tc.tokens, RowBytes: uint32(rb), LDY: uint32(c.rows)})
				gx, gy := mulMVGroups(c.rows, int(tc.tokens), spec)
				b.SetBytes(int64(size) * batch)
				benchBatches(b, d, batch, func(r *Recorder) {
					r.Dispatch(p, gx, gy, 1, push)
					r.Barrier()
				})
			})
		}
		w.Free()
		x.Free()
		y.Free()
	}
}

// BenchmarkDispatch times what a dispatch costs on its own: 50 dispatches
// of a one-workgroup add and of a 4096x1024 Q8_0 product (its 4.4 MB in
// the device's cache after the first) in one command buffer, with a
// barrier after each and without (the products then overlap: a timing
// only). A dispatch's share is the time over 50.
func BenchmarkDispatch(b *testing.B) {
	d := testDevice(b)
	const batch = 50
	const rows, cols = 4096, 1024
	rb, _ := gguf.TensorQ8_0.RowBytes(cols)
	w, err := d.NewBuffer(int64(rows) * int64(rb))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Free()
	if err := d.Fill(w, 0, w.Size(), 0); err != nil {
		b.Fatal(err)
	}
	x, _ := d.NewBuffer(4 * cols)
	y, err := d.NewBuffer(4 * rows)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Free()
	defer y.Free()
	add, err := d.Pipeline("add", elementWG)
	if err != nil {
		b.Fatal(err)
	}
	name, _ := mulMVShader(gguf.TensorQ8_0)
	spec := mulMVSpecRows(d.SubgroupSize, rows, 1)
	mv, err := d.Pipeline(name, spec[0], spec[1], spec[2], xPlain)
	if err != nil {
		b.Fatal(err)
	}
	pushAddB := pushAdd{X: y.Addr(), Y: y.Addr(), N: elementWG}
	pushMV := pushMulMV{W: w.Addr(), X: x.Addr(), Y: y.Addr(), Rows: rows, Cols: cols, N: 1, RowBytes: uint32(rb), LDY: rows}
	gx, gy := mulMVGroups(rows, 1, spec)
	for _, c := range []struct {
		name    string
		p       *Pipeline
		push    []byte
		gx, gy  uint32
		barrier bool
	}{
		{"add/barrier", add, PushBytes(&pushAddB), 1, 1, true},
		{"add/none", add, PushBytes(&pushAddB), 1, 1, false},
		{"q8_0_4096x1024/barrier", mv, PushBytes(&pushMV), gx, gy, true},
		{"q8_0_4096x1024/none", mv, PushBytes(&pushMV), gx, gy, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchBatches(b, d, batch, func(r *Recorder) {
				r.Dispatch(c.p, c.gx, c.gy, 1, c.push)
				if c.barrier {
					r.Barrier()
				}
			})
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch)/1e3, "us/dispatch")
		})
	}
}
