package cuda

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"inferno/backend"
	"inferno/gguf"
	"inferno/numfmt"
)

func TestFloatExp(t *testing.T) {
	t.Parallel()
	bf := func(vs ...float32) []byte {
		b := make([]byte, 2*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint16(b[2*i:], numfmt.F32ToBF16(v))
		}
		return b
	}
	f32 := func(vs ...float32) []byte {
		b := make([]byte, 4*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		return b
	}
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, c := range []struct {
		t    gguf.TensorType
		row  []byte
		want int
	}{
		{gguf.TensorBF16, bf(1, -2, 65280), 0}, // the largest BF16 below f16Max
		{gguf.TensorBF16, bf(65504), 1},        // rounds to 65536
		{gguf.TensorBF16, bf(1, -1e6, 3), 4},   // 1e6/16 = 62500
		{gguf.TensorBF16, bf(inf, nan, -inf, 7), 0},
		{gguf.TensorF32, f32(0.5, 65505), 1},
		{gguf.TensorF32, f32(-3e38, 1), 112}, // 3e38/2^112 = 57779,
		{gguf.TensorF16, []byte{0xff, 0x7b}, 0},
	} {
		if got := floatExp(c.t, c.row); got != c.want {
			t.Errorf("floatExp(%s, %v) = %d, want %d", c.t, c.row, got, c.want)
		}
	}
}

func TestPackFloat(t *testing.T) {
	t.Parallel()
	f := formatOf(gguf.TensorBF16)
	rows := [][]byte{{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}}
	data, mpad, exp, err := packFloat(f, 3, 2, func(r int) []byte { return rows[r] })
	if err != nil || mpad != 64 || exp != 0 || len(data) != 64*4 {
		t.Fatalf("packFloat: %d bytes, mpad %d, exp %d, %v", len(data), mpad, exp, err)
	}
	if string(data[:12]) != string([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}) || strings.Trim(string(data[12:]), "\x00") != "" {
		t.Errorf("packFloat: rows not as in the file, padding not zeros: %v", data[:16])
	}
	if _, _, _, err := packFloat(f, 3, 2, func(r int) []byte { return rows[r][:3] }); err == nil || !strings.Contains(err.Error(), "has 3 bytes, want 4") {
		t.Errorf("short row: %v", err)
	}
	w := &backend.Weight{Name: "w", Type: gguf.TensorF16, Rows: 2, Cols: 48, Data: make([]byte, 2*2*48)}
	if err := checkWeight(w); err == nil || !strings.Contains(err.Error(), "not a multiple of 32") {
		t.Errorf("48 columns of F16: %v", err)
	}
	w.Cols, w.Data = 64, make([]byte, 2*2*64)
	if err := checkWeight(w); err != nil {
		t.Errorf("64 columns of F16: %v", err)
	}
}
