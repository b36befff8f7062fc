package cuda

// Tests that need no GPU: they run everywhere, CI included.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

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

// TestPTXStamp fails when a kernel source changed after the PTX and
// cubins were built (the stamp records the sources' SHA-256: run
// ./build_ptx.sh), or when an embedded file is not the one the stamp
// records (a PTX or cubin left from another build).
func TestPTXStamp(t *testing.T) {
	skipWithoutEmbedded(t)
	stamp, err := os.ReadFile("kernels/kernels.ptx.stamp")
	if err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob("kernels/*.cu")
	more, _ := filepath.Glob("kernels/*.cuh")
	names = append(names, more...)
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	lines := strings.Split(strings.TrimSpace(string(stamp)), "\n")
	if got := hex.EncodeToString(h.Sum(nil)); lines[0] != got {
		t.Fatalf("the kernels are stale: sources hash to %s, the stamp says %s; run backend/cuda/build_ptx.sh where nvcc exists", got, lines[0])
	}
	if len(lines) < 5 {
		t.Fatalf("stamp has %d lines: want the sources' hash, the nvcc and the two ptxas versions, then each output's hash", len(lines))
	}
	listed := map[string]bool{}
	for _, l := range lines[4:] {
		sum, name, ok := strings.Cut(l, " ")
		if !ok {
			t.Fatalf("stamp line %q", l)
		}
		listed[name+".gz"] = true
		b, err := embedded(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
			t.Errorf("embedded %s.gz holds %s, the stamp says %s: run backend/cuda/build_ptx.sh", name, hex.EncodeToString(got[:]), sum)
		}
	}
	files, err := kernelFiles.ReadDir("kernels")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !listed[f.Name()] {
			t.Errorf("embedded kernels/%s is not in the stamp", f.Name())
		}
	}
	for _, cc := range cubinArchs {
		if !listed[cubinFor(cc)+".gz"] {
			t.Errorf("no cubin for compute capability %d", cc)
		}
	}
	for _, name := range []string{ptxFor(80), ptxFor(90)} {
		if !listed[name+".gz"] {
			t.Errorf("no %s", name)
		}
	}
}

// TestMatvecKernelsExist checks that every matvec kernel tuning.go may
// name (mvKernelNames) is an entry of both embedded PTX modules, and that
// the defaults' kernels are among them.
func TestMatvecKernelsExist(t *testing.T) {
	skipWithoutEmbedded(t)
	for _, mod := range []string{ptxFor(80), ptxFor(90)} {
		b, err := embedded(mod)
		if err != nil {
			t.Fatal(err)
		}
		for name := range mvKernelNames {
			if !bytes.Contains(b, []byte(".entry "+name+"(")) {
				t.Errorf("%s: no kernel %s", mod, name)
			}
		}
	}
	for _, k := range defaultTuning().mvKernels() {
		if !mvKernelNames[k.name] {
			t.Errorf("default matvec %s is not in mvKernelNames", k.name)
		}
	}
}

// TestKernelChoice checks which embedded module each GPU loads.
func TestKernelChoice(t *testing.T) {
	skipWithoutEmbedded(t)
	for _, c := range []struct {
		cc         int
		cubin, ptx string
	}{
		{80, "kernels_sm80.cubin", "kernels.ptx"}, {86, "kernels_sm86.cubin", "kernels.ptx"},
		{87, "kernels_sm86.cubin", "kernels.ptx"}, {89, "kernels_sm89.cubin", "kernels.ptx"},
		{90, "kernels_sm90.cubin", "kernels_sm90.ptx"}, {100, "", "kernels_sm90.ptx"}, {120, "", "kernels_sm90.ptx"},
	} {
		if got := cubinFor(c.cc); got != c.cubin {
			t.Errorf("cc %d: cubin %q, want %q", c.cc, got, c.cubin)
		}
		if got := ptxFor(c.cc); got != c.ptx {
			t.Errorf("cc %d: PTX %q, want %q", c.cc, got, c.ptx)
		}
	}
	t.Setenv("INFERNO_CUDA_PTX", "") // the embedded images, even where a run overrides them
	t.Setenv("INFERNO_CUDA_JIT", "1")
	img, err := kernelSource(90)
	if err != nil {
		t.Fatal(err)
	}
	if img.what != "embedded kernels_sm90.ptx" || !img.pdl || img.data[len(img.data)-1] != 0 || !bytes.HasPrefix(bytes.TrimSpace(img.data), []byte("//")) {
		t.Errorf("INFERNO_CUDA_JIT=1: %s, pdl %v", img.what, img.pdl)
	}
	t.Setenv("INFERNO_CUDA_JIT", "")
	if img, err = kernelSource(86); err != nil || img.what != "embedded kernels_sm86.cubin" || img.pdl || img.fallback != "kernels.ptx" {
		t.Errorf("cc 86: %s, pdl %v, fallback %q, %v", img.what, img.pdl, img.fallback, err)
	}
	if !bytes.HasPrefix(img.data, []byte("\x7fELF")) {
		t.Error("the cubin is not an ELF file")
	}
}

func mustRead(t *testing.T, name string) []byte {
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPTXUpToDate rebuilds the PTX with nvcc, where nvcc exists, and fails
// when the committed PTX differs from what the sources give.
func TestPTXUpToDate(t *testing.T) {
	nvcc := os.Getenv("NVCC")
	if nvcc == "" {
		var err error
		if nvcc, err = exec.LookPath("nvcc"); err != nil {
			t.Skip("nvcc not found (set NVCC or put it on PATH): PTX not rebuilt; TestPTXStamp still checks the sources")
		}
	}
	cmd := exec.Command("./build_ptx.sh", "--check")
	cmd.Env = append(os.Environ(), "NVCC="+nvcc)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("build_ptx.sh --check: %v", err)
	}
}

func TestParseTuning(t *testing.T) {
	tu, err := parseTuning("qkv=2, ok=2,gu=2,downk=2,head=1,headb=0,gub=0,qkvb=0")
	if err != nil {
		t.Fatal(err)
	}
	want := defaultTuning()
	want.qkv.rpw, want.o.ks, want.down.ks, want.head.rpw = 2, 2, 2, 1
	want.head.b3, want.gu.b3, want.qkv.b3 = false, false, false
	if tu != want {
		t.Errorf("got %+v, want %+v", tu, want)
	}
	for _, c := range []struct {
		m          mvCfg
		kind, name string
	}{{want.o, "add", "mvf_q8_add_r1_k2"}, {want.qkv, "store", "mvf_q8_store_r2_k1"}, {defaultTuning().qkv, "store", "mvf_q8_store_r2_k1_b3"}, {want.head, "argmax", "mv_q8_argmax_r1"},
		{defaultTuning().head, "argmax", "mv_q8_argmax_r4_b3"}} {
		if got := c.m.name(c.kind); got != c.name {
			t.Errorf("name %q, want %q", got, c.name)
		}
	}
	tu, err = parseTuning("carveout=50,h128=33,mvn=4,mmq=0,mmq8=64,mq64=0,mq2=1,mqn=32,mqw=1,moeh=8,moegate=4,moeb=3,moebmin=5,moent=4,mmn=32")
	if err != nil {
		t.Fatal(err)
	}
	want = defaultTuning()
	want.carveout, want.h128, want.mvn, want.mmq, want.mmq8, want.mq64, want.mmn = 50, 33, 4, 0, 64, 0, 32
	want.mq2, want.mqn, want.mqw, want.moeH, want.moeGate = 1, 32, 1, 8, 4
	want.moeB, want.moeBMin, want.moeNT = 3, 5, 4
	if tu != want {
		t.Errorf("got %+v, want %+v", tu, want)
	}
	for _, bad := range []string{"qkv=3", "gu=1", "x=1", "qkv", "nsplit=16", "afd=0", "ok=3", "asplit=2", "minchunk=64", "pdl=1", "mvn=9", "mmq=-1", "mmq8=-1", "mq64=-1", "mq2=2", "mqn=48", "mqw=2", "moeh=0", "moegate=0", "moeb=-1", "moent=-1", "moebmin=-2",
		"downf=0", "headb=1", "head=4,headb=0", "qkv=1,qkvb=3", "ok=2,ob=3", "headf=1", "mmn=8", "mmn=48"} {
		if _, err := parseTuning(bad); err == nil {
			t.Errorf("%q: no error", bad)
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

func TestParseBatchTuning(t *testing.T) {
	tu, err := parseBatchTuning("mm=64, hmm=32, nt=4,ny=4,xl=0,zc=4096,mvf=0,graph=0,split=3,minchunk=64,ahead=0,cb=2,cmin=16,cmax=0,pdl=0,mvpdl=0,c1=0")
	if err != nil {
		t.Fatal(err)
	}
	want := batchTuning{mmMin: 64, headMM: 32, nt: 4, ny: 4, xl: false, zc: 4096, mvf1: false, graph: false, splitMul: 3, minchunk: 64, cb: 2, cmin: 16}
	if tu != want {
		t.Errorf("got %+v, want %+v", tu, want)
	}
	if tu, _ := parseBatchTuning(""); tu != defaultBatchTuning() {
		t.Errorf("empty: %+v", tu)
	}
	for _, bad := range []string{"nt=3", "mm=0", "split=0", "zc=-1", "ks=4", "x", "nt=x", "cb=-1", "cmin=0", "cmax=-1", "ny=0", "hmm=0"} {
		if _, err := parseBatchTuning(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	// mmv_q8's passes: 64-tile matrices (a small model's O and down) on
	// 132 SMs spread their tokens over up to ny blocks a tile; others do not.
	br := &BatchRunner{dev: &device{SMs: 132}, bt: defaultBatchTuning()}
	for _, c := range []struct{ cap, n, tiles, nt, ny int }{
		{4, 1, 64, 1, 1}, {4, 8, 64, 1, 1}, {4, 9, 64, 1, 2}, {4, 16, 64, 1, 2}, {4, 32, 64, 1, 4}, {4, 64, 64, 2, 4},
		{4, 100, 64, 2, 4}, {4, 40, 64, 2, 3}, {4, 64, 256, 8, 1}, {4, 64, 384, 8, 1}, {4, 64, 100, 4, 2},
		{2, 64, 64, 4, 2}, {2, 32, 64, 2, 2}, {1, 64, 64, 8, 1},
	} {
		br.bt.ny = c.cap
		if nt, ny := br.skinnyPasses(c.n, c.tiles); nt != c.nt || ny != c.ny {
			t.Errorf("ny=%d: skinnyPasses(%d, %d) = %d, %d; want %d, %d", c.cap, c.n, c.tiles, nt, ny, c.nt, c.ny)
		}
	}
	for n, want := range map[int]int{1: 0, 2: 1, 16: 4, 12: -1, 4096: 12, 3: -1} {
		if got := log2Exact(n); got != want {
			t.Errorf("log2Exact(%d) = %d, want %d", n, got, want)
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

// skipWithoutEmbedded skips a test of the embedded kernel files in a
// binary built with -tags cuda_noembed, which has none.
func skipWithoutEmbedded(t *testing.T) {
	t.Helper()
	if !kernelsEmbedded {
		t.Skip("built with -tags cuda_noembed: no embedded kernels to check")
	}
}
