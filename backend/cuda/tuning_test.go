package cuda

import (
	"strings"
	"testing"
)

// TestMatvecNames checks the matvec kernels' names (mvCfg.name) and that
// the defaults' kernels are instantiated (tuning.check).
func TestMatvecNames(t *testing.T) {
	t.Parallel()
	def := defaultTuning()
	for _, c := range []struct {
		m          mvCfg
		kind, name string
	}{
		{mvCfg{1, 2, true, false}, "add", "mvf_q8_add_r1_k2"},
		{mvCfg{2, 1, true, false}, "store", "mvf_q8_store_r2_k1"},
		{def.qkv, "store", "mvf_q8_store_r2_k1_b3"},
		{mvCfg{1, 1, false, false}, "argmax", "mv_q8_argmax_r1"},
		{def.head, "argmax", "mv_q8_argmax_r4_b3"},
	} {
		if got := c.m.name(c.kind); got != c.name {
			t.Errorf("%+v %s: name %q, want %q", c.m, c.kind, got, c.name)
		}
	}
	if err := def.check(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
	for _, c := range []struct {
		name string
		set  func(*tuning)
		want string
	}{
		{"gate/up at 1 row a warp", func(t *tuning) { t.gu.rpw = 1 }, "2 (a gate row"},
		{"QKV at 3 rows a warp", func(t *tuning) { t.qkv.rpw = 3 }, "mvf_q8_store_r3_k1_b3"},
		{"the head's float r4", func(t *tuning) { t.head.fl = true }, "mvf_q8_argmax_r4_k1_b3"},
		{"O split-K in 3 blocks an SM", func(t *tuning) { t.o.ks, t.o.b3 = 2, true }, "mvf_q8_add_r1_k2_b3"},
	} {
		tu := def
		c.set(&tu)
		if err := tu.check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
	}
}

// TestBatchTuningFor checks the batch runner's choices by device: the
// cluster attention and programmatic dependent launch from compute
// capability 9.0 on only, the rest the same everywhere; and the refusal of
// choices the kernels cannot take.
func TestBatchTuningFor(t *testing.T) {
	t.Parallel()
	h200 := batchTuningFor(&device{SMs: 132, CC: 90, pdl: true})
	a100 := batchTuningFor(&device{SMs: 108, CC: 80})
	if h200.cb == 0 || !h200.pdl || a100.cb != 0 || a100.pdl {
		t.Errorf("cluster attention, PDL: sm_90 %d %v, sm_80 %d %v; want on, off", h200.cb, h200.pdl, a100.cb, a100.pdl)
	}
	same := a100
	same.cb, same.pdl = h200.cb, h200.pdl
	if same != h200 {
		t.Errorf("sm_80 %+v, sm_90 %+v: more differs than the sm_90 features", a100, h200)
	}
	if err := h200.check(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
	for _, bad := range []func(*batchTuning){
		func(t *batchTuning) { t.nt = 3 },
		func(t *batchTuning) { t.ny = 0 },
		func(t *batchTuning) { t.mmMin = 0 },
		func(t *batchTuning) { t.splitMul = 0 },
		func(t *batchTuning) { t.zc = -1 },
		func(t *batchTuning) { t.cmin = 0 },
		func(t *batchTuning) { t.dcap = 9 },
		func(t *batchTuning) { t.psplit = maxPrefillSplits + 1 },
	} {
		tu := h200
		bad(&tu)
		if err := tu.check(); err == nil {
			t.Errorf("%+v: no error", tu)
		}
	}
}

// TestSkinnyPasses checks mmv_q8's passes: 64-tile matrices (a small
// model's O and down) on 132 SMs spread their tokens over up to ny blocks
// a tile; others do not.
func TestSkinnyPasses(t *testing.T) {
	t.Parallel()
	br := &BatchRunner{dev: &device{SMs: 132}, bt: batchTuningFor(&device{SMs: 132, CC: 90})}
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

// TestPoolBudget: the KV pool sized from the memory takes what the budget
// leaves (90% of an 80 GiB device by default, or a fraction or size given)
// beside the process's allocations, never more than is free, less the
// reserve for graphs and inputs.
func TestPoolBudget(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		free, total, inUse uint64
		fraction           float64
		bytes, want        uint64
	}{
		{80 * gib, 80 * gib, 1 * gib, 0, 0, 72*gib - 1*gib - poolReserve},   // the default: 0.9
		{80 * gib, 80 * gib, 1 * gib, 0.5, 0, 40*gib - 1*gib - poolReserve}, // a fraction
		{80 * gib, 80 * gib, 1 * gib, 0, 20 * gib, 19*gib - poolReserve},    // a size
		{10 * gib, 80 * gib, 1 * gib, 0, 0, 10*gib - poolReserve},           // others hold the rest: what is free
		{80 * gib, 80 * gib, 75 * gib, 0, 0, 0},                             // the weights take the budget
		{80 * gib, 80 * gib, 1 * gib, 0.02, 0, 0},                           // less than the reserve
	} {
		if got := poolBudget(tc.free, tc.total, tc.inUse, tc.fraction, tc.bytes); got != tc.want {
			t.Errorf("poolBudget(free %d GiB, total %d GiB, in use %d GiB, %v, %d) = %.2f GiB, want %.2f",
				tc.free/gib, tc.total/gib, tc.inUse/gib, tc.fraction, tc.bytes/gib, float64(got)/gib, float64(tc.want)/gib)
		}
	}
}
