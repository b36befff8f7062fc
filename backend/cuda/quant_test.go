package cuda

// CPU tests of the block formats' upload layout (run everywhere): the
// planes packQuant writes, decoded by a transcription of the kernels'
// arithmetic (q_word, q_ac, q_deq_f32 of kernels/formats.cuh and q_dot),
// give back package numfmt's dequantization of the file's blocks.

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"inferno/backend"
	"inferno/gguf"
	"inferno/numfmt"
)

// qtraits mirror kernels/formats.cuh's qt<T>: values per scale, integer
// offset, additive term, signed quants, IQ4 table.
type qtraits struct {
	sub, off       int
	hasC, sgn, tab bool
}

var qtraitsOf = map[gguf.TensorType]qtraits{
	gguf.TensorQ4_0:   {sub: 32, off: 8},
	gguf.TensorQ4_1:   {sub: 32, hasC: true},
	gguf.TensorQ5_0:   {sub: 32, off: 16},
	gguf.TensorQ5_1:   {sub: 32, hasC: true},
	gguf.TensorQ8_0:   {sub: 32, sgn: true},
	gguf.TensorQ2_K:   {sub: 16, hasC: true},
	gguf.TensorQ3_K:   {sub: 16, off: 4},
	gguf.TensorQ4_K:   {sub: 32, hasC: true},
	gguf.TensorQ5_K:   {sub: 32, hasC: true},
	gguf.TensorQ6_K:   {sub: 16, off: 32},
	gguf.TensorIQ4_NL: {sub: 32, sgn: true, tab: true},
	gguf.TensorIQ4_XS: {sub: 32, sgn: true, tab: true},
	gguf.TensorMXFP4:  {sub: 32, sgn: true, tab: true},
}

var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// kvaluesMXFP4 is formats.cuh's qtab<QT_MXFP4>: the E2M1 values doubled.
var kvaluesMXFP4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// issueTypes are the block types the CUDA backend must multiply.
var issueTypes = []gguf.TensorType{gguf.TensorQ4_0, gguf.TensorQ4_1, gguf.TensorQ5_0, gguf.TensorQ5_1, gguf.TensorQ8_0,
	gguf.TensorQ2_K, gguf.TensorQ3_K, gguf.TensorQ4_K, gguf.TensorQ5_K, gguf.TensorQ6_K, gguf.TensorIQ4_NL, gguf.TensorIQ4_XS,
	gguf.TensorMXFP4}

func TestQuantTable(t *testing.T) {
	t.Parallel()
	for _, typ := range issueTypes {
		f := formatOf(typ)
		if f == nil || !Supports(typ) {
			t.Errorf("%s: not supported", typ)
			continue
		}
		if n, ok := typ.RowBytes(uint64(f.qk)); !ok || int(n) != f.bytes {
			t.Errorf("%s: %d bytes a block, gguf says %d", typ, f.bytes, n)
		}
		if qf, ok := numfmt.FormatOf(typ); ok && (qf.BlockSize != f.qk || qf.BlockBytes != f.bytes) {
			t.Errorf("%s: block %d values / %d bytes, numfmt says %d / %d", typ, f.qk, f.bytes, qf.BlockSize, qf.BlockBytes)
		}
		if _, ok := qtraitsOf[typ]; !ok {
			t.Errorf("%s: no traits", typ)
		}
		if f.mv == "" || f.mmSkinny == "" || f.mmPrefill == "" {
			t.Errorf("%s: kernels missing", typ)
		}
		// Planes hold the file's bytes, bit for bit rearranged (Q3_K: 2
		// bytes of padding a block).
		planes := f.qk*(f.lo+f.hi)/8 + f.m0 + f.m1
		pad := 0
		if typ == gguf.TensorQ3_K {
			pad = 2
		}
		if planes != f.bytes+pad {
			t.Errorf("%s: planes take %d bytes a block, the file %d", typ, planes, f.bytes)
		}
	}
	for _, typ := range []gguf.TensorType{gguf.TensorF32, gguf.TensorF16, gguf.TensorBF16} {
		if !Supports(typ) {
			t.Errorf("%s: not supported (half.go)", typ)
		}
	}
	for _, typ := range []gguf.TensorType{gguf.TensorQ8_1, gguf.TensorQ8_K} {
		if Supports(typ) {
			t.Errorf("%s: supported", typ)
		}
	}
	if err := checkWeight(&backend.Weight{Name: "w", Type: gguf.TensorF16, Rows: 1, Cols: 48}); err == nil {
		t.Error("F16 with 48 columns accepted")
	}
	if err := checkWeight(&backend.Weight{Name: "w", Type: gguf.TensorQ4_K, Rows: 1, Cols: 32}); err == nil {
		t.Error("Q4_K with 32 columns accepted")
	}
}

// emuWord is q_word: Q of values 4g..4g+3 of a unit, one a byte.
func emuWord(f *qformat, tr qtraits, lo, hi []byte, g int) uint32 {
	le := func(b []byte, i int) int32 { return int32(binary.LittleEndian.Uint32(b[4*i:])) }
	var w int32
	switch f.lo {
	case 4:
		if g < 4 {
			w = le(lo, g) & 0x0F0F0F0F
		} else {
			w = (le(lo, g-4) >> 4) & 0x0F0F0F0F
		}
	case 2:
		w = (le(lo, g>>2) >> (2 * (g & 3))) & 0x03030303
	case 8:
		w = le(lo, g)
	}
	switch f.hi {
	case 1:
		w |= ((le(hi, 0) >> g) & 0x01010101) << f.lo
	case 2:
		w |= ((le(hi, g>>2) >> (2 * (g & 3))) & 0x03030303) << f.lo
	}
	u := uint32(w)
	if tr.tab {
		kv := kvaluesIQ4NL
		if f.t == gguf.TensorMXFP4 {
			kv = kvaluesMXFP4
		}
		var m uint32
		for i := range 4 {
			m |= uint32(uint8(kv[(u>>(8*i))&15])) << (8 * i)
		}
		u = m
	}
	return u
}

// emuAC is q_ac: a and c of sub-blocks 0 and 1 of unit j of a block whose
// scale bytes are m0, m1 (as the planes hold them).
func emuAC(typ gguf.TensorType, m0, m1 []byte, j int) (a, c [2]float32) {
	h := func(b []byte) float32 { return numfmt.F16ToF32(binary.LittleEndian.Uint16(b)) }
	mul := func(x, y float32) float32 { return float32(x * y) }
	switch typ {
	case gguf.TensorQ4_0, gguf.TensorQ5_0, gguf.TensorQ8_0, gguf.TensorIQ4_NL:
		a[0] = h(m0)
		a[1] = a[0]
	case gguf.TensorQ4_1, gguf.TensorQ5_1:
		a[0], c[0] = h(m0), h(m0[2:])
		a[1], c[1] = a[0], c[0]
	case gguf.TensorQ2_K:
		d, dm := h(m1), h(m1[2:])
		for k := range 2 {
			s := m0[2*j+k]
			a[k], c[k] = mul(d, float32(s&15)), -mul(dm, float32(s>>4))
		}
	case gguf.TensorQ3_K:
		d := h(m0[12:])
		for k := range 2 {
			s := 2*j + k
			l4 := int(m0[s&7]>>(4*(s>>3))) & 15
			h2 := int(m0[8+s&3]>>(2*(s>>2))) & 3
			a[k] = mul(d, float32(l4|h2<<4-32))
		}
	case gguf.TensorQ4_K, gguf.TensorQ5_K:
		d, dm := h(m0), h(m0[2:])
		sc := m0[4:16]
		var s, mn int
		if j < 4 {
			s, mn = int(sc[j]&63), int(sc[j+4]&63)
		} else {
			s = int(sc[j+4]&15) | int(sc[j-4]>>6)<<4
			mn = int(sc[j+4]>>4) | int(sc[j]>>6)<<4
		}
		a[0], c[0] = mul(d, float32(s)), -mul(dm, float32(mn))
		a[1], c[1] = a[0], c[0]
	case gguf.TensorQ6_K:
		d := h(m1)
		a[0], a[1] = mul(d, float32(int8(m0[2*j]))), mul(d, float32(int8(m0[2*j+1])))
	case gguf.TensorIQ4_XS:
		d := h(m0)
		sh := int(binary.LittleEndian.Uint16(m0[2:]))
		ls := int(m0[4+j/2]>>(4*(j&1)))&15 | (sh>>(2*j))&3<<4
		a[0] = mul(d, float32(ls-32))
		a[1] = a[0]
	case gguf.TensorMXFP4: // e8m0_half
		e := uint32(m0[0])
		if e < 2 {
			a[0] = math.Float32frombits(0x00200000 << e)
		} else {
			a[0] = math.Float32frombits((e - 1) << 23)
		}
		a[1] = a[0]
	}
	return a, c
}

// emuUnit returns unit u of row r of the planes: its Q bytes (as q_word
// gives them), a and c.
func emuUnit(f *qformat, p qplanes, r, cols, u int) (words [8]uint32, a, c [2]float32) {
	tr := qtraitsOf[f.t]
	v0 := r*cols + 32*u
	lo := p.lo[v0*f.lo/8 : (v0+32)*f.lo/8]
	var hi []byte
	if f.hi > 0 {
		hi = p.hi[v0*f.hi/8 : (v0+32)*f.hi/8]
	}
	for g := range 8 {
		words[g] = emuWord(f, tr, lo, hi, g)
	}
	blk := (r*cols + 32*u) / f.qk
	a, c = emuAC(f.t, p.m0[blk*f.m0:(blk+1)*f.m0], p.m1[blk*f.m1:(blk+1)*f.m1], u%(f.qk/32))
	return words, a, c
}

// emuRow is q_deq_f32 over row r of the planes.
func emuRow(f *qformat, p qplanes, r, cols int) []float32 {
	tr := qtraitsOf[f.t]
	out := make([]float32, cols)
	for u := range cols / 32 {
		words, a, c := emuUnit(f, p, r, cols, u)
		for g := range 8 {
			s := 0
			if tr.sub == 16 && g >= 4 {
				s = 1
			}
			for i := range 4 {
				v := float32(int(int8(words[g]>>(8*i))) - tr.off)
				x := float32(a[s] * v)
				if tr.hasC {
					x = float32(x + c[s])
				}
				out[32*u+4*g+i] = x
			}
		}
	}
	return out
}

// emuDot is q_dot with float activations: sum over units of
// a*dot(Q, x) + (c - a*OFF)*sum(x) per sub-block.
func emuDot(f *qformat, p qplanes, r, cols int, x []float32) float64 {
	tr := qtraitsOf[f.t]
	var acc float64
	for u := range cols / 32 {
		words, a, c := emuUnit(f, p, r, cols, u)
		var dq, sx [2]float64
		for g := range 8 {
			s := 0
			if g >= 4 {
				s = 1
			}
			for i := range 4 {
				xv := float64(x[32*u+4*g+i])
				dq[s] += float64(int8(words[g]>>(8*i))) * xv
				sx[s] += xv
			}
		}
		if tr.sub == 32 {
			acc += float64(a[0])*(dq[0]+dq[1]) + (float64(c[0])-float64(a[0])*float64(tr.off))*(sx[0]+sx[1])
		} else {
			for s := range 2 {
				acc += float64(a[s])*dq[s] + (float64(c[s])-float64(a[s])*float64(tr.off))*sx[s]
			}
		}
	}
	return acc
}

// randomBlocks returns n blocks of type typ: quantized random values
// (half of the rows, with spread scales) and random bytes with finite f16
// scales (the other half).
func randomBlocks(rng *rand.Rand, typ gguf.TensorType, rows, cols int) []byte {
	f := formatOf(typ)
	qf, _ := numfmt.FormatOf(typ)
	nb := cols / f.qk
	data := make([]byte, rows*nb*f.bytes)
	halves := map[gguf.TensorType][]int{
		gguf.TensorQ4_0: {0}, gguf.TensorQ4_1: {0, 2}, gguf.TensorQ5_0: {0}, gguf.TensorQ5_1: {0, 2}, gguf.TensorQ8_0: {0},
		gguf.TensorQ2_K: {80, 82}, gguf.TensorQ3_K: {108}, gguf.TensorQ4_K: {0, 2}, gguf.TensorQ5_K: {0, 2},
		gguf.TensorQ6_K: {208}, gguf.TensorIQ4_NL: {0}, gguf.TensorIQ4_XS: {0},
	}[typ]
	vals := make([]float32, cols)
	for r := range rows {
		row := data[r*nb*f.bytes : (r+1)*nb*f.bytes]
		if r%2 == 0 && qf != nil && qf.Quantize != nil {
			scale := float32(math.Exp(rng.NormFloat64())) / float32(math.Sqrt(float64(cols)))
			for i := range vals {
				vals[i] = float32(rng.NormFloat64()) * scale
				if rng.IntN(50) == 0 {
					vals[i] *= 8 // outliers
				}
			}
			qf.Quantize(row, vals)
			continue
		}
		for i := range row {
			row[i] = byte(rng.Uint32())
		}
		for b := range nb {
			for _, o := range halves {
				binary.LittleEndian.PutUint16(row[b*f.bytes+o:], numfmt.F32ToF16(float32(rng.NormFloat64()*0.01)))
			}
			if typ == gguf.TensorMXFP4 { // the E8M0 exponent: 2^-14 .. 2^-7
				row[b*f.bytes] = byte(114 + rng.IntN(8))
			}
		}
	}
	return data
}

// TestQuantPack: for every type, random blocks packed into planes and
// decoded as the kernels decode them equal package numfmt's dequantization
// (to the last bit, or one ulp where a compiler fused a product and a sum),
// padding rows are zeros, and the kernels' integer-dot formulation equals
// the dot product of the dequantized row.
func TestQuantPack(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	for _, typ := range issueTypes {
		f := formatOf(typ)
		qf, ok := numfmt.FormatOf(typ)
		if !ok || qf.Dequantize == nil {
			t.Logf("%s: package numfmt cannot dequantize it yet; skipped", typ)
			continue
		}
		rows, cols := 37, 2*max(f.qk, 64)
		data := randomBlocks(rng, typ, rows, cols)
		w := &backend.Weight{Name: "w", Type: typ, Rows: rows, Cols: cols, Data: data}
		p, err := packQuant(f, rows, cols, func(r int) []byte { return w.Row(r) })
		if err != nil {
			t.Fatal(err)
		}
		if p.mpad != 64 {
			t.Fatalf("%s: mpad %d", typ, p.mpad)
		}
		want := make([]float32, cols)
		worst, ulps := 0.0, 0
		x := randVec(rng, cols, 1)
		for r := range rows {
			qf.Dequantize(want, w.Row(r))
			got := emuRow(f, p, r, cols)
			for i := range want {
				if got[i] == want[i] {
					continue
				}
				d := math.Abs(float64(got[i]) - float64(want[i]))
				ulp := math.Abs(float64(math.Nextafter32(want[i], float32(math.Inf(1))) - want[i]))
				if d > ulp*1.01 || math.IsNaN(d) {
					t.Fatalf("%s: row %d value %d: planes give %v, numfmt %v", typ, r, i, got[i], want[i])
				}
				ulps++
			}
			var ref float64
			for i := range want {
				ref += float64(want[i]) * float64(x[i])
			}
			got64 := emuDot(f, p, r, cols, x)
			worst = max(worst, math.Abs(got64-ref)/(math.Abs(ref)+1e-3))
		}
		if worst > 1e-5 {
			t.Errorf("%s: integer-dot formulation off by %.3g (relative)", typ, worst)
		}
		zero := qplanes{lo: p.lo[rows*cols*f.lo/8:], hi: p.hi[rows*cols*f.hi/8:], m0: p.m0[rows*cols/f.qk*f.m0:], m1: p.m1[rows*cols/f.qk*f.m1:]}
		for _, b := range [][]byte{zero.lo, zero.hi, zero.m0, zero.m1} {
			for _, v := range b {
				if v != 0 {
					t.Fatalf("%s: padding rows are not zero", typ)
				}
			}
		}
		t.Logf("%s: %d rows x %d: planes decode as numfmt dequantizes (%d values one ulp apart); dot formulation within %.2g", typ, rows, cols, ulps, worst)
	}
}

// TestQuantPackMXFP4Scales: MXFP4 blocks of every E8M0 exponent, 0 to
// 255, packed into planes and decoded as the kernels decode them
// (e8m0_half: subnormal scales for 0 and 1, 2^127 for 255, levels times
// it overflowing to infinity at the top) equal numfmt's dequantization bit
// for bit.
func TestQuantPackMXFP4Scales(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(39, 3))
	f := formatOf(gguf.TensorMXFP4)
	const rows, cols = 8, 32 * 32
	data := make([]byte, rows*cols/32*f.bytes)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for b := range rows * cols / 32 {
		data[b*f.bytes] = byte(b) // every exponent once
	}
	w := &backend.Weight{Name: "w", Type: gguf.TensorMXFP4, Rows: rows, Cols: cols, Data: data}
	p, err := packQuant(f, rows, cols, func(r int) []byte { return w.Row(r) })
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float32, cols)
	for r := range rows {
		if err := numfmt.DequantizeRow(want, w.Row(r), gguf.TensorMXFP4, cols); err != nil {
			t.Fatal(err)
		}
		got := emuRow(f, p, r, cols)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("row %d value %d (e=%d): planes give %g, numfmt %g", r, i, w.Row(r)[i/32*f.bytes], got[i], want[i])
			}
		}
	}
}

// TestQtabLevels: the level tables of kernels/formats.cuh's qtab (IQ4_NL
// and IQ4_XS in the primary template, MXFP4 in its specialization), read
// from the source, are numfmt's, and this file's copies the same.
func TestQtabLevels(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("kernels/formats.cuh")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`struct qtab(<QT_MXFP4>)? \{\s*static constexpr unsigned W0 = 0x([0-9A-F]{8})u, W1 = 0x([0-9A-F]{8})u, W2 = 0x([0-9A-F]{8})u, W3 = 0x([0-9A-F]{8})u;`)
	found := 0
	for _, m := range re.FindAllStringSubmatch(string(src), -1) {
		var kv [16]int8
		for w := range 4 {
			v, _ := strconv.ParseUint(m[2+w], 16, 32)
			for b := range 4 {
				kv[4*w+b] = int8(v >> (8 * b))
			}
		}
		want, mine := numfmt.KValuesIQ4NL, kvaluesIQ4NL
		if m[1] != "" {
			want, mine = numfmt.KValuesMXFP4, kvaluesMXFP4
		}
		if kv != want || mine != want {
			t.Errorf("qtab%s: levels %v, this test's %v, numfmt's %v", m[1], kv, mine, want)
		}
		found++
	}
	if found != 2 {
		t.Fatalf("found %d qtab tables in formats.cuh, want 2", found)
	}
}

// TestQuantPackShortRow: a row shorter than its blocks is an error, not a
// panic in a packing goroutine.
func TestQuantPackShortRow(t *testing.T) {
	t.Parallel()
	f := formatOf(gguf.TensorQ4_K)
	full := make([]byte, 2*f.bytes)
	_, err := packQuant(f, 3, 2*f.qk, func(r int) []byte {
		if r == 1 {
			return full[:f.bytes+7]
		}
		return full
	})
	if err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Fatalf("got %v, want an error naming row 1", err)
	}
}

// TestMMHSplits checks the split choice of the b128 products: none where
// the grid fills the resident slots or K is short, enough to fill them
// where whole rounds allow, and never past mmhSplitMost blocks or 8 splits.
func TestMMHSplits(t *testing.T) {
	for _, c := range []struct{ tiles, slots, nk, want int }{
		{264, 264, 512, 1},  // a full round already
		{1024, 264, 80, 1},  // Mistral Small's gate-up at 512 tokens
		{160, 264, 512, 3},  // its down: 480 blocks in two rounds
		{160, 264, 16, 1},   // 2 splits take two rounds too
		{160, 264, 15, 1},   // K too short to cut
		{32, 264, 80, 1},    // a lone V run: K too short to gain
		{32, 264, 160, 8},   // a longer one: one round of 256 blocks
		{192, 264, 64, 1},   // Qwen3-8B's QKV: K too short to gain
		{128, 264, 192, 2},  // its down: one round of halves
		{200, 264, 512, 5},  // four rounds of fifths against one of a whole
		{600, 1000, 512, 1}, // 1,200 blocks would pass mmhSplitMost
		{10, 0, 512, 1},     // no occupancy known
	} {
		got := mmhSplits(c.tiles, c.slots, c.nk)
		if got != c.want {
			t.Errorf("mmhSplits(%d tiles, %d slots, %d stages) = %d, want %d", c.tiles, c.slots, c.nk, got, c.want)
		}
		if got > 1 && (got*c.tiles > mmhSplitMost || c.nk < 8*got) {
			t.Errorf("mmhSplits(%d, %d, %d) = %d: past the limits", c.tiles, c.slots, c.nk, got)
		}
	}
}
