package numfmt_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"inferno/gguf"
	"inferno/numfmt"
)

// The fixtures in testdata/ggml come from ggml itself (gen.c, gen.sh):
// float rows, ggml_quantize_chunk's bytes for them with no importance
// matrix, ggml's dequantization of those bytes, and random raw blocks
// with their dequantization.

type fixtureCase struct {
	row int
	q   []byte
	y   []float32 // nil when ggml has no dequantizer (F32, Q8_1)
}

type fixtureRaw struct {
	q []byte
	y []float32
}

type fixture struct {
	typ         gguf.TensorType
	blck, bytes int
	cases       []fixtureCase
	raw         []fixtureRaw
}

func readGz(t testing.TB, name string) *bytes.Reader {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "ggml", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}

type reader struct {
	t testing.TB
	r *bytes.Reader
}

func (r reader) u32() int {
	var v uint32
	if err := binary.Read(r.r, binary.LittleEndian, &v); err != nil {
		r.t.Fatal(err)
	}
	return int(v)
}

func (r reader) bytes(n int) []byte {
	b := make([]byte, n)
	if _, err := io.ReadFull(r.r, b); err != nil {
		r.t.Fatal(err)
	}
	return b
}

func (r reader) floats(n int) []float32 {
	b := r.bytes(4 * n)
	f := make([]float32, n)
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return f
}

func (r reader) magic(want string) {
	if got := string(r.bytes(4)); got != want {
		r.t.Fatalf("magic %q, want %q", got, want)
	}
}

func loadRows(t testing.TB) [][]float32 {
	r := reader{t, readGz(t, "rows.bin.gz")}
	r.magic("IFQR")
	rows := make([][]float32, r.u32())
	for i := range rows {
		rows[i] = r.floats(r.u32())
	}
	return rows
}

// fixtureName is ggml's type name, the fixture's file name.
func fixtureName(t gguf.TensorType) string {
	s := strings.ToLower(t.String())
	return strings.Replace(s, "_k", "_K", 1)
}

// firstFloatDiff reports the first value whose bits differ.
func firstFloatDiff(got, want []float32) (int, bool) {
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return i, true
		}
	}
	return 0, false
}

func describeFloatDiff(got, want []float32, blck int) string {
	i, _ := firstFloatDiff(got, want)
	n := 0
	for j := range want {
		if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
			n++
		}
	}
	return fmt.Sprintf("%d values differ, first [%d] (block %d): %g (%#08x), ggml %g (%#08x)",
		n, i, i/blck, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
}

func describeByteDiff(got, want []byte, bb int) string {
	n, first := 0, -1
	for i := range want {
		if got[i] != want[i] {
			if first < 0 {
				first = i
			}
			n++
		}
	}
	b := first / bb
	return fmt.Sprintf("%d bytes differ, first at %d (block %d, offset %d)\n got  % x\n ggml % x",
		n, first, b, first%bb, got[b*bb:(b+1)*bb], want[b*bb:(b+1)*bb])
}

// TestGGMLFixtures checks every format against ggml bit for bit:
// Quantize(rows) equals ggml's bytes, Dequantize(ggml's bytes) equals
// ggml's floats, and the raw blocks dequantize to ggml's floats.
func TestGGMLFixtures(t *testing.T) {
	rows := loadRows(t)
	for _, f := range numfmt.Formats() {
		t.Run(f.Type.String(), func(t *testing.T) {
			fx := loadFixture(t, f.Type, rows)
			if fx.blck != f.BlockSize || fx.bytes != f.BlockBytes {
				t.Fatalf("ggml block %d values in %d bytes; table %d in %d", fx.blck, fx.bytes, f.BlockSize, f.BlockBytes)
			}
			nq, nd, nraw := 0, 0, 0
			for _, c := range fx.cases {
				x := rows[c.row]
				got := make([]byte, len(c.q))
				f.Quantize(got, x)
				if !bytes.Equal(got, c.q) {
					t.Errorf("row %d (%d values): Quantize: %s", c.row, len(x), describeByteDiff(got, c.q, f.BlockBytes))
				} else {
					nq++
				}
				if c.y == nil {
					continue
				}
				y := make([]float32, len(x))
				f.Dequantize(y, c.q)
				if _, bad := firstFloatDiff(y, c.y); bad {
					t.Errorf("row %d: Dequantize: %s", c.row, describeFloatDiff(y, c.y, f.BlockSize))
				} else {
					nd++
				}
			}
			for i, c := range fx.raw {
				y := make([]float32, len(c.y))
				f.Dequantize(y, c.q)
				if _, bad := firstFloatDiff(y, c.y); bad {
					t.Errorf("raw set %d: Dequantize: %s", i, describeFloatDiff(y, c.y, f.BlockSize))
				}
				nraw += len(c.q) / f.BlockBytes
			}
			t.Logf("%s: %d/%d rows quantize bit-exact, %d dequantize bit-exact, %d raw blocks", f.Type, nq, len(fx.cases), nd, nraw)
		})
	}
}

func loadFixture(t testing.TB, typ gguf.TensorType, rows [][]float32) *fixture {
	r := reader{t, readGz(t, fixtureName(typ)+".bin.gz")}
	r.magic("IFQT")
	fx := &fixture{typ: gguf.TensorType(r.u32()), blck: r.u32(), bytes: r.u32()}
	if fx.typ != typ {
		t.Fatalf("fixture for %s holds type %s", typ, fx.typ)
	}
	hasDeq := r.u32() != 0
	fx.cases = make([]fixtureCase, r.u32())
	for i := range fx.cases {
		c := &fx.cases[i]
		c.row = r.u32()
		n := len(rows[c.row])
		c.q = r.bytes(n / fx.blck * fx.bytes)
		if hasDeq {
			c.y = r.floats(n)
		}
	}
	fx.raw = make([]fixtureRaw, r.u32())
	for i := range fx.raw {
		nb := r.u32()
		fx.raw[i].q = r.bytes(nb * fx.bytes)
		fx.raw[i].y = r.floats(nb * fx.blck)
	}
	return fx
}
