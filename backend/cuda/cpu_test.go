package cuda

// Tests that need no GPU: they run everywhere, CI included.

import (
	"encoding/binary"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/gguf"
)

// TestAvailable checks that Available answers (nil on a GPU machine, one
// line elsewhere) without panicking.
func TestAvailable(t *testing.T) {
	err := Available()
	if err == nil {
		v, _ := DriverVersion()
		t.Logf("CUDA available, driver API version %d", v)
		return
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("Available's reason is not one line: %q", err)
	}
	t.Logf("CUDA not available: %v", err)
}

// TestLoadWithoutGPU checks that Load fails cleanly, not with a panic,
// where there is no driver.
func TestLoadWithoutGPU(t *testing.T) {
	if Available() == nil {
		t.Skip("a GPU is present")
	}
	m := tinyModel(t)
	if _, err := Load(m, Options{}); err == nil {
		t.Fatal("Load succeeded without a GPU")
	}
}

// TestMatvecKernelsExist checks that every matvec kernel tuning.go may
// name (mvKernelNames) is a kernel of every embedded image, and that the
// defaults' kernels are among them.
func TestMatvecKernelsExist(t *testing.T) {
	skipWithoutEmbedded(t)
	checkKernelsExist(t, mvKernelNames)
	for _, k := range defaultTuning().mvKernels() {
		if !mvKernelNames[k.name] {
			t.Errorf("default matvec %s is not in mvKernelNames", k.name)
		}
	}
}

// TestPack checks the GPU weight layout built on the host: int8 values
// row-major with zero padding rows, scales row-major and block-major, and
// the gate/up interleaving the SwiGLU epilogues rely on.
func TestPack(t *testing.T) {
	const rows, cols = 70, 96
	nb := cols / 32
	src := make([][]byte, rows)
	for r := range src {
		src[r] = make([]byte, nb*34)
		for b := range nb {
			binary.LittleEndian.PutUint16(src[r][b*34:], uint16(r*16+b))
			for j := range 32 {
				src[r][b*34+2+j] = byte(r + b*32 + j)
			}
		}
	}
	q, drow, dcol, mpad := pack(rows, cols, func(r int) []byte { return src[r] })
	if mpad != 128 || len(q) != mpad*cols || len(drow) != rows*nb*2 || len(dcol) != nb*mpad*2 {
		t.Fatalf("sizes: mpad %d q %d drow %d dcol %d", mpad, len(q), len(drow), len(dcol))
	}
	for r := range mpad {
		for c := range cols {
			want := byte(0)
			if r < rows {
				want = byte(r + c)
			}
			if q[r*cols+c] != want {
				t.Fatalf("q[%d][%d] = %d, want %d", r, c, q[r*cols+c], want)
			}
		}
		for b := range nb {
			want := uint16(0)
			if r < rows {
				want = uint16(r*16 + b)
				if got := binary.LittleEndian.Uint16(drow[(r*nb+b)*2:]); got != want {
					t.Fatalf("drow[%d][%d] = %d, want %d", r, b, got, want)
				}
			}
			if got := binary.LittleEndian.Uint16(dcol[(b*mpad+r)*2:]); got != want {
				t.Fatalf("dcol[%d][%d] = %d, want %d", b, r, got, want)
			}
		}
	}
	// gate/up: row 16g+i is gate row 8g+i, row 16g+8+i up row 8g+i.
	if gateUpRows(20) != 48 {
		t.Errorf("gateUpRows(20) = %d", gateUpRows(20))
	}
	for i, want := range map[int][2]int{0: {0, 0}, 7: {0, 7}, 8: {1, 0}, 15: {1, 7}, 16: {0, 8}, 24: {1, 8}, 47: {1, 23}} {
		up, s := gateUpRow(i)
		if (up && want[0] != 1) || (!up && want[0] != 0) || s != want[1] {
			t.Errorf("gateUpRow(%d) = %v %d, want %v", i, up, s, want)
		}
	}
}

// TestMMQ8Tile checks mm_q8's token tiles: a 0.6B's O and down (16 row
// tiles) on 132 SMs take narrower tiles up to 1,024 tokens, its QKV and
// gate/up products (64 and 96 row tiles) 64-token ones from 256 tokens.
func TestMMQ8Tile(t *testing.T) {
	r := &Model{dev: &device{SMs: 132}, tune: defaultTuning()}
	for _, c := range []struct {
		n, mpad, mmn int
		suf          string
		ntl          int
	}{
		{512, 1024, 16, "_n32", 32}, {512, 1024, 64, "", 64}, {1024, 1024, 16, "", 64}, {8192, 1024, 16, "", 64},
		{512, 4096, 16, "", 64}, {512, 6144, 16, "", 64}, {256, 4096, 16, "", 64}, {128, 4096, 16, "_n32", 32},
		{128, 1024, 16, "_n16", 16}, {128, 1024, 32, "_n32", 32}, {256, 1024, 16, "_n16", 16}, {320, 1024, 16, "_n32", 32},
	} {
		r.tune.mmn = c.mmn
		if suf, ntl := r.mmQ8Tile(c.n, c.mpad); suf != c.suf || ntl != c.ntl {
			t.Errorf("mmn=%d: mmQ8Tile(%d, %d) = %q, %d; want %q, %d", c.mmn, c.n, c.mpad, suf, ntl, c.suf, c.ntl)
		}
	}
}

// TestFit checks the memory estimate against Q8_0's layout and the one-line
// refusal when a model does not fit.
func TestFit(t *testing.T) {
	m := shapeModel(t, shapes[1]) // head dim 64, untied
	c := m.Config
	f := estimateFootprint(m, 2048)
	var want int64
	for _, w := range []struct{ rows, cols int }{{c.Vocab, c.Hidden}, {c.Vocab, c.Hidden}} {
		want += gpuMatrixBytes(gguf.TensorQ8_0, w.rows, w.cols, 0)
	}
	for range c.Layers {
		want += gpuMatrixBytes(gguf.TensorQ8_0, c.QDim()+2*c.KVDim(), c.Hidden, 0) + gpuMatrixBytes(gguf.TensorQ8_0, c.Hidden, c.QDim(), 0) +
			gpuMatrixBytes(gguf.TensorQ8_0, gateUpRows(c.FFN), c.Hidden, 0) + gpuMatrixBytes(gguf.TensorQ8_0, c.Hidden, c.FFN, 0)
	}
	if f.weights < want || f.weights > want+1<<20 {
		t.Errorf("weights %d bytes, want %d and the norms", f.weights, want)
	}
	if f.kv != int64(2*2*c.Layers*c.KVDim()*2048) || f.positions != 2048 {
		t.Errorf("KV %d bytes for %d positions", f.kv, f.positions)
	}
	if err := fitError(f, uint64(2*f.total()), "GPU"); err != nil {
		t.Errorf("fits twice over: %v", err)
	}
	// Q8_0 in its own layout never splits K: no split workspace. A block
	// format's matrix brings it.
	if splitsK(m) {
		t.Error("a Q8_0 model counted as splitting K")
	}
	if d := batchScratchBytes(&c, true) - batchScratchBytes(&c, false); d != mmhSplitMost*(mmhSplitBytes+4) {
		t.Errorf("the split workspace adds %d bytes to the scratch, want %d", d, mmhSplitMost*(mmhSplitBytes+4))
	}
	down := *m.Layers[1].Matrix(arch.RoleDown)
	down.Type = gguf.TensorQ4_K
	m.Layers[1].SetMatrix(arch.RoleDown, &down)
	if !splitsK(m) {
		t.Error("a Q4_K down matrix not counted as splitting K")
	}
	big := footprint{weights: 15 << 30, kvPerPos: 160 << 10, kv: (160 << 10) * 40960, positions: 40960, scratch: 1 << 30}
	err := fitError(big, 20<<30, "NVIDIA X")
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "needs 22.2 GiB") ||
		!strings.Contains(err.Error(), "20.0 GiB free") || !strings.Contains(err.Error(), "--ctx 23552") {
		t.Errorf("refusal: %v", err)
	}
	if err := fitError(big, 10<<30, "NVIDIA X"); err == nil || strings.Contains(err.Error(), "--ctx") {
		t.Errorf("weights do not fit: %v", err)
	}
}

// TestQactHKernelsExist checks that every qact_h variant qactHKernel may
// pick is a kernel of every embedded image.
func TestQactHKernelsExist(t *testing.T) {
	skipWithoutEmbedded(t)
	names := map[string]bool{}
	for _, K := range []int{1000, 5000, 20000, 40000} {
		for _, norm := range []bool{false, true} {
			name, _ := qactHKernel(K, norm)
			names[name] = true
		}
	}
	if len(names) != 3 {
		t.Errorf("qactHKernel picks %d kernels, want 3: %v", len(names), names)
	}
	checkKernelsExist(t, names)
}

// checkKernelsExist fails t for each of names that some embedded image
// lacks.
func checkKernelsExist(t *testing.T, names map[string]bool) {
	t.Helper()
	for _, img := range embeddedImages() {
		have, err := imageKernels(img)
		if err != nil {
			t.Fatal(err)
		}
		for name := range names {
			if !have[name] {
				t.Errorf("%s: no kernel %s", img, name)
			}
		}
	}
}
