package vulkan

// The window pool (window.go): a model with sliding-window layers and
// others keeps the former's keys and values in a pool of their own, its
// blocks named by the batches' LocalTables, those before a sequence's
// window freed (Hole) and reused. Gemma 3's and gpt-oss's presets with a
// window of 20 positions (two and a half blocks of 8) run the same
// sequences with and without LocalTables (a small window pool) and on the
// CPU's window pool; engine.Single's ring against the CPU; the checks of
// the tables, the copies, the pools' sizes and memory.

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/backend/forward"
	"inferno/backend/scalar"
	"inferno/batch"
	"inferno/engine"
	"inferno/kvcache"
	"inferno/sampling"
)

var (
	_ engine.WindowRunner = (*BatchRunner)(nil)
	_ engine.PoolSizer    = (*BatchRunner)(nil)
)

// windowCases are Gemma 3 (five sliding-window layers in six) and gpt-oss
// (every other layer) of TestArchitectures.
var windowCases = []archCase{archCases[8], moeCases[2]}

const testWindow = 20

// windowModel returns c's model with its sliding-window layers' window
// set to testWindow.
func windowModel(t testing.TB, c archCase) *arch.Loaded {
	t.Helper()
	m, ok := archModel(t, c).(*arch.Loaded)
	if !ok {
		t.Fatalf("%s: not an *arch.Loaded", c.name)
	}
	m.Config.Window = testWindow
	if err := m.Config.Validate(); err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	local := 0
	for i := range m.Config.Layers {
		if m.Config.LayerWindow(i) > 0 {
			local++
		}
	}
	if local == 0 || local == m.Config.Layers {
		t.Fatalf("%s: %d sliding-window layers of %d", c.name, local, m.Config.Layers)
	}
	return m
}

func newWindowRunner(t testing.TB, md *Model, blocks, localBlocks, bs int) *BatchRunner {
	t.Helper()
	br, err := md.NewWindowBatchRunner(blocks, localBlocks, bs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { br.Close() })
	return br
}

// blockAlloc hands out a pool's blocks in a shuffled order.
type blockAlloc struct{ free []int32 }

func newBlockAlloc(rng *rand.Rand, n int) *blockAlloc {
	a := &blockAlloc{}
	for _, i := range rng.Perm(n) {
		a.free = append(a.free, int32(i))
	}
	return a
}

// grow returns tab with blocks for positions up to n-1.
func (a *blockAlloc) grow(t testing.TB, tab []int32, n, bs int) []int32 {
	t.Helper()
	for len(tab)*bs < n {
		if len(a.free) == 0 {
			t.Fatalf("the pool is exhausted at %d positions", n)
		}
		tab = append(tab, a.free[0])
		a.free = a.free[1:]
	}
	return tab
}

func randomTokens(rng *rand.Rand, n, vocab int) []int32 {
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(rng.IntN(vocab))
	}
	return ids
}

// TestWindowPool runs the same sequences on a runner whose batches have
// no LocalTables (the main tables name the window pool's blocks too), on
// one with a window pool of 12 blocks, handed out in a shuffled order, a
// sequence's blocks before its window freed (Hole in its table) after
// each step and reused by the others, and on the CPU's window pool
// (forward.NewWindowBatched, the same batches): prompts past the window
// in one batch, a prompt's second chunk (its first block a hole), decode
// steps of three sequences, a mixed batch with a new prompt, copies on
// write in both pools, then decode steps of one. Every output's logits
// within 1e-5 relative L2 of the one-pool runner's, with its argmax, and
// within 2e-3 of the CPU's.
func TestWindowPool(t *testing.T) {
	for _, c := range windowCases {
		t.Run(c.name, func(t *testing.T) { windowPoolRun(t, windowModel(t, c)) })
	}
}

func windowPoolRun(t *testing.T, m *arch.Loaded) {
	const bs, blocks, localBlocks, maxLen = 8, 48, 12, 128
	W, V := m.Config.Window, m.Config.Vocab
	md := loadModel(t, m, Options{MaxLen: maxLen, Device: -1})
	ref := newWindowRunner(t, md, blocks, 0, bs)
	win := newWindowRunner(t, md, blocks, localBlocks, bs)
	if n, w := ref.WindowPool(); n != blocks || w != W {
		t.Errorf("one-pool runner: window pool %d blocks, window %d; want %d, %d", n, w, blocks, W)
	}
	if n, w := win.WindowPool(); n != localBlocks || w != W {
		t.Errorf("window pool %d blocks, window %d; want %d, %d", n, w, localBlocks, W)
	}
	page, lpage := poolPages(&m.Config, true, bs)
	if page+lpage != int64(4*m.Config.Layers*m.Config.KVDim()*bs) || page == 0 || lpage == 0 {
		t.Errorf("blocks of %d and %d bytes in the two pools", page, lpage)
	}
	if pool, full := ref.PoolBytes(); pool != full || full != blocks*(page+lpage) {
		t.Errorf("one-pool runner: PoolBytes %d, full %d; want %d", pool, full, blocks*(page+lpage))
	}
	if pool, full := win.PoolBytes(); pool != blocks*page+localBlocks*lpage || full != blocks*(page+lpage) {
		t.Errorf("PoolBytes %d, full %d; want %d, %d", pool, full, blocks*page+localBlocks*lpage, blocks*(page+lpage))
	}
	cpu, err := forward.NewWindowBatched(m, scalar.NewScalar(), maxLen, blocks, localBlocks, bs, kvcache.F16)
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	rng := rand.New(rand.NewPCG(31, 5))
	alloc, lalloc := newBlockAlloc(rng, blocks), newBlockAlloc(rng, localBlocks)
	type seq struct {
		tab, local []int32
		len        int
		next       int32
	}
	var steps, holes int
	worst, worstCPU := 0.0, 0.0
	run := func(what string, seqs []*seq, in [][]int32) {
		t.Helper()
		var b, lb batch.Batch
		for i, s := range seqs {
			s.tab = alloc.grow(t, s.tab, s.len+len(in[i]), bs)
			s.local = lalloc.grow(t, s.local, s.len+len(in[i]), bs)
			b.Add(b.AddSeq(s.tab), in[i], s.len, true)
			lb.Add(lb.AddWindowSeq(s.tab, s.local), in[i], s.len, true)
		}
		if err := ref.Forward(&b); err != nil {
			t.Fatalf("%s: one pool: %v", what, err)
		}
		if err := win.Forward(&lb); err != nil {
			t.Fatalf("%s: window pool: %v", what, err)
		}
		if err := cpu.Forward(&lb); err != nil {
			t.Fatalf("%s: the CPU: %v", what, err)
		}
		steps++
		for i, s := range seqs {
			got, want := batchLogits(t, win, i), batchLogits(t, ref, i)
			cl, err := cpu.Logits(i)
			if err != nil {
				t.Fatal(err)
			}
			e, ec := relL2(got, want), relL2(got, cl)
			worst, worstCPU = max(worst, e), max(worstCPU, ec)
			if !(e <= 1e-5) {
				t.Errorf("%s: output %d: relative L2 %.3g with the window pool against one pool > 1e-5", what, i, e)
			}
			if !(ec <= 2e-3) {
				t.Errorf("%s: output %d: relative L2 %.3g against the CPU > 2e-3", what, i, ec)
			}
			a, _ := ref.Greedy(i)
			w, _ := win.Greedy(i)
			if a != w || w != int32(sampling.Argmax(got)) {
				t.Fatalf("%s: output %d: argmax %d on one pool, %d with the window pool (its logits' %d)", what, i, a, w, sampling.Argmax(got))
			}
			s.next = a
			s.len += len(in[i])
			// Free the blocks wholly before the next position's window.
			for j := 0; (j+1)*bs <= s.len-W+1; j++ {
				if s.local[j] != batch.Hole {
					lalloc.free = append(lalloc.free, s.local[j])
					s.local[j] = batch.Hole
					holes++
				}
			}
		}
	}
	greedy := func(seqs []*seq) [][]int32 {
		in := make([][]int32, len(seqs))
		for i, s := range seqs {
			in[i] = []int32{s.next}
		}
		return in
	}
	seqs := []*seq{{}, {}, {}}
	run("prompts", seqs, [][]int32{randomTokens(rng, 30, V), randomTokens(rng, 21, V), randomTokens(rng, 30, V)})
	// Sequence 2's next prompt chunk, alone: its first block is a hole.
	if seqs[2].local[0] != batch.Hole {
		t.Fatalf("sequence 2's first window pool block %d, want a hole", seqs[2].local[0])
	}
	run("a second prompt chunk", seqs[2:], [][]int32{randomTokens(rng, 15, V)})
	for step := range 14 {
		run(fmt.Sprintf("decode of 3, step %d", step), seqs, greedy(seqs))
	}
	// Sequence 1 ends; a new prompt takes its blocks, with the others'
	// next tokens.
	alloc.free = append(alloc.free, seqs[1].tab...)
	for _, blk := range seqs[1].local {
		if blk != batch.Hole {
			lalloc.free = append(lalloc.free, blk)
		}
	}
	seqs = []*seq{seqs[0], seqs[2], {}}
	in := greedy(seqs)
	in[2] = randomTokens(rng, 2*bs+3, V)
	run("mixed, a new prompt", seqs, in)
	for step := range 6 {
		if step == 2 {
			// Copy on write of sequence 0's partial last block, in both
			// pools (the one-pool runner's window pool at the main ids).
			s := seqs[0]
			last := (s.len - 1) / bs
			dst, ldst := alloc.free[0], lalloc.free[0]
			alloc.free, lalloc.free = alloc.free[1:], lalloc.free[1:]
			for _, err := range []error{ref.CopyBlock(dst, s.tab[last]), ref.CopyLocalBlock(dst, s.tab[last]),
				win.CopyBlock(dst, s.tab[last]), win.CopyLocalBlock(ldst, s.local[last]),
				cpu.CopyBlock(dst, s.tab[last]), cpu.CopyLocalBlock(ldst, s.local[last])} {
				if err != nil {
					t.Fatal(err)
				}
			}
			lalloc.free = append(lalloc.free, s.local[last])
			s.tab = append(append([]int32(nil), s.tab[:last]...), dst)
			s.local = append(append([]int32(nil), s.local[:last]...), ldst)
		}
		run(fmt.Sprintf("decode of 3 after, step %d", step), seqs, greedy(seqs))
	}
	seqs = seqs[:1]
	for step := range 8 {
		run(fmt.Sprintf("decode of 1, step %d", step), seqs, greedy(seqs))
	}
	t.Logf("%d batches, %d blocks freed; worst relative L2 %.3g against one pool, %.3g against the CPU", steps, holes, worst, worstCPU)
	if holes < 10 {
		t.Errorf("%d blocks freed, want 10 at least", holes)
	}
}

func batchLogits(t testing.TB, r *BatchRunner, i int) []float32 {
	t.Helper()
	l, err := r.Logits(i)
	if err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), l...)
}

// TestWindowRing runs engine.Single on a window pool of 6 blocks of 8
// positions (a ring: a prompt of 270 tokens in chunks of 14) against the
// CPU's full attention: every step within 2e-3 relative L2 with the same
// top-1. The decode steps, past 256 positions, cut the attention's keys
// into runs (attnSplits), the runs past the window empty.
func TestWindowRing(t *testing.T) {
	for _, c := range windowCases {
		t.Run(c.name, func(t *testing.T) {
			m := windowModel(t, c)
			const maxLen, bs = 512, 8
			md := loadModel(t, m, Options{MaxLen: maxLen, Device: -1})
			br := newWindowRunner(t, md, maxLen/bs, 6, bs)
			g := engine.NewSingle(br)
			cpu := cpuSingle(t, m, maxLen)
			rng := rand.New(rand.NewPCG(3, 4))
			next := randomTokens(rng, 270, m.Config.Vocab)
			worst := 0.0
			for step := range 12 {
				for _, s := range []*engine.Single{g, cpu} {
					if err := s.Forward(next); err != nil {
						t.Fatalf("step %d: %v", step, err)
					}
				}
				gl, cl := lastLogits(t, g), lastLogits(t, cpu)
				e := relL2(gl, cl)
				worst = max(worst, e)
				if !(e <= 2e-3) {
					t.Errorf("step %d: relative L2 %.3g vs the CPU > 2e-3", step, e)
				}
				if a, b := sampling.Argmax(gl), sampling.Argmax(cl); a != b {
					t.Errorf("step %d: top-1 %d, the CPU's %d", step, a, b)
				}
				id, err := cpu.Greedy()
				if err != nil {
					t.Fatal(err)
				}
				next = []int32{id}
			}
			t.Logf("worst relative L2 against the CPU over 12 steps: %.3g; the last step's attention in %d runs", worst, br.last.splits)
			if br.last.splits < 2 {
				t.Errorf("the decode steps' attention in %d runs of keys, want 2 at least", br.last.splits)
			}
		})
	}
}

// TestWindowErrors checks what Forward refuses of a batch's window pool
// tables (a hole or a block past the pool in a sequence's window, a
// table short of its last token, a table missing, main tables past a
// smaller window pool without LocalTables), and what it takes (holes
// before the first token's window); the copies' bounds; a model without
// windows (no window pool, LocalTables refused); the pools sized from the
// memory budget, and a window pool past it refused in one line.
func TestWindowErrors(t *testing.T) {
	m := windowModel(t, moeCases[2])
	const bs, blocks, localBlocks = 8, 16, 6
	md := loadModel(t, m, Options{MaxLen: 128, Device: -1, MemoryBytes: 64 << 20})
	br := newWindowRunner(t, md, blocks, localBlocks, bs)
	V := m.Config.Vocab
	good := func() *batch.Batch {
		var b batch.Batch
		// A chunk at 40..44: its first token's window starts at 21 (block 2).
		b.Add(b.AddWindowSeq([]int32{10, 11, 12, 13, 14, 15}, []int32{batch.Hole, batch.Hole, 2, 0, 1, 5}), randomTokens(rand.New(rand.NewPCG(1, 1)), 5, V), 40, true)
		b.Add(b.AddWindowSeq([]int32{3}, []int32{4}), []int32{1}, 5, true)
		return &b
	}
	if err := br.Forward(good()); err != nil {
		t.Fatalf("good batch: %v", err)
	}
	for name, edit := range map[string]func(b *batch.Batch){
		"hole in the window":       func(b *batch.Batch) { b.LocalTables[0][2] = batch.Hole },
		"block past the pool":      func(b *batch.Batch) { b.LocalTables[0][5] = localBlocks },
		"table short of the token": func(b *batch.Batch) { b.LocalTables[0] = b.LocalTables[0][:5] },
		"a table missing":          func(b *batch.Batch) { b.LocalTables = b.LocalTables[:1] },
	} {
		b := good()
		edit(b)
		if err := br.Forward(b); err == nil || !strings.Contains(err.Error(), "vulkan:") {
			t.Errorf("%s: %v", name, err)
		}
	}
	var b batch.Batch
	b.Add(b.AddSeq([]int32{localBlocks - 1}), []int32{1}, 0, true)
	if err := br.Forward(&b); err != nil {
		t.Errorf("main tables within the window pool: %v", err)
	}
	b.Tables[0][0] = localBlocks
	if err := br.Forward(&b); err == nil || !strings.Contains(err.Error(), "window pool") {
		t.Errorf("main tables past the window pool: %v", err)
	}
	for _, c := range [][2]int32{{localBlocks, 0}, {0, localBlocks}, {-1, 0}} {
		if err := br.CopyLocalBlock(c[0], c[1]); err == nil {
			t.Errorf("CopyLocalBlock(%d, %d) in a window pool of %d: no error", c[0], c[1], localBlocks)
		}
	}
	if err := br.CopyBlock(blocks, 0); err == nil {
		t.Errorf("CopyBlock(%d, 0) in a pool of %d: no error", blocks, blocks)
	}

	// The pools sized from the budget: the window pool's first, the main
	// pool from what is left.
	free, _ := md.PoolMemory()
	page, lpage := poolPages(&m.Config, true, bs)
	left := int64(free) - md.scratchBytes(defaultCap)
	for _, lb := range []int{0, 20} {
		auto, err := md.NewWindowBatchRunner(0, lb, bs)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := auto.WindowPool()
		want := int(left / (page + lpage))
		if lb > 0 {
			want = int((left - int64(lb)*lpage) / page)
		}
		if auto.Blocks() != want || lb > 0 && n != lb || lb == 0 && n != want {
			t.Errorf("pools sized from the budget (window pool %d): %d and %d blocks, want %d", lb, auto.Blocks(), n, want)
		}
		auto.Close()
	}
	if _, err := md.NewWindowBatchRunner(16, int(left/lpage)+1, bs); err == nil || !strings.Contains(err.Error(), "window pool") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a window pool past the budget: %v", err)
	}

	// A model without windows: one pool.
	plain := loadModel(t, archModel(t, archCases[0]), Options{MaxLen: 128, Device: -1})
	pr := newWindowRunner(t, plain, blocks, localBlocks, bs)
	if n, w := pr.WindowPool(); n != 0 || w != 0 {
		t.Errorf("WindowPool without windows: %d, %d", n, w)
	}
	if pool, full := pr.PoolBytes(); pool != full || pool != int64(blocks*4*plain.c.Layers*plain.c.KVDim()*bs) {
		t.Errorf("PoolBytes without windows: %d, %d", pool, full)
	}
	if err := pr.CopyLocalBlock(0, 1); err == nil {
		t.Error("CopyLocalBlock without a window pool: no error")
	}
	var lb batch.Batch
	lb.Add(lb.AddWindowSeq([]int32{0}, []int32{0}), []int32{1}, 0, true)
	if err := pr.Forward(&lb); err == nil || !strings.Contains(err.Error(), "window pool") {
		t.Errorf("local tables for a model without windows: %v", err)
	}
}
