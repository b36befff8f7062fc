package cuda

// The window pool (batch_pool.go): a model with sliding-window layers and
// others keeps the former's keys and values in a pool of their own, its
// blocks named by the batches' LocalTables, those before a sequence's
// window freed (Hole) and reused. On the GPU: Gemma 3's and gpt-oss's
// presets run the same sequences with and without LocalTables (a small
// window pool), bit for bit, and the pools' sizes. Without one: the
// inputs' layout (batch_meta.go), the checks of the tables, which models
// get a window pool and the memory estimate.

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"inferno/arch"
	"inferno/batch"
	"inferno/engine"
	"inferno/synth"
)

var (
	_ engine.WindowRunner = (*BatchRunner)(nil)
	_ engine.PoolSizer    = (*BatchRunner)(nil)
)

// windowCases are small Gemma 3 and gpt-oss models with a window of 40
// positions (two and a half blocks of 16).
var windowCases = []optCase{
	{archCase: archCase{name: "gemma3", preset: "gemma3-1b", mix: "Q8_0",
		shape: synth.Shape{Layers: 6, Hidden: 256, FFN: 512, Heads: 4, KVHeads: 1, HeadDim: 256, Vocab: 1024}}, edit: window(40)},
	{archCase: archCase{name: "gptoss", preset: "gpt-oss-20b", mix: "Q8_0",
		shape: synth.Shape{Layers: 4, Hidden: 512, FFN: 512, Heads: 8, KVHeads: 2, HeadDim: 64, Vocab: 1024, Experts: 4, TopK: 4, ExpertFFN: 256}}, edit: window(40)},
}

func newWindowBatchRunner(t testing.TB, r *Model, blocks, localBlocks, bs int) *BatchRunner {
	t.Helper()
	br, err := r.NewWindowBatchRunner(blocks, localBlocks, bs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := br.Close(); err != nil {
			t.Error(err)
		}
	})
	return br
}

// TestWindowPool runs the same sequences on a runner whose batches have
// no LocalTables (the main tables name the window pool's blocks too) and
// on one with a window pool of 20 blocks, handed out in a shuffled order,
// a sequence's blocks before its window freed (Hole in its table) after
// each step and reused by the others: prompts past the window in one
// batch, a prompt in two chunks (the second's window past the first
// blocks), decode steps of three sequences (bucket 4: a padding token in
// each pool's scratch block; the lookahead taken across a freed block),
// a mixed batch with a new prompt, copies on write in both pools, then
// decode steps of one. Every argmax and the logits read must be
// identical.
func TestWindowPool(t *testing.T) {
	requireGPU(t)
	for _, c := range windowCases {
		t.Run(c.name, func(t *testing.T) {
			m := optModel(t, c)
			windowPoolRun(t, m)
		})
	}
}

func windowPoolRun(t *testing.T, m *arch.Loaded) {
	W := m.Config.Window
	r := newModel(t, m, Options{MaxLen: 512})
	const bs, blocks, localBlocks = 16, 64, 20
	ref := newBatchRunner(t, r, blocks, bs)
	win := newWindowBatchRunner(t, r, blocks, localBlocks, bs)
	if b, w := ref.WindowPool(); b != blocks || w != W {
		t.Errorf("one-pool runner: window pool %d blocks, window %d; want %d, %d", b, w, blocks, W)
	}
	if b, w := win.WindowPool(); b != localBlocks || w != W {
		t.Errorf("window pool %d blocks, window %d; want %d, %d", b, w, localBlocks, W)
	}
	if st := win.Stats(); st.LocalBlocks != localBlocks || st.PoolBytes != uint64(blocks+1)*win.blockBytes()+uint64(localBlocks+1)*win.localBlockBytes() {
		t.Errorf("stats: %d local blocks, %d pool bytes", st.LocalBlocks, st.PoolBytes)
	}
	if pool, full := ref.PoolBytes(); pool != full || pool != int64(ref.Stats().PoolBytes) {
		t.Errorf("one-pool runner: PoolBytes %d, full %d", pool, full)
	}
	if pool, full := win.PoolBytes(); pool != int64(win.Stats().PoolBytes) || full != int64(blocks+1)*int64(win.blockBytes()+win.localBlockBytes()) || pool >= full {
		t.Errorf("PoolBytes %d, full %d", pool, full)
	}
	windowPoolSizes(t, r, win, bs)
	rng := rand.New(rand.NewPCG(31, 5))
	alloc := newBlockAlloc(rng, blocks)
	lalloc := newBlockAlloc(rng, localBlocks)
	V := m.Config.Vocab
	type seq struct {
		tab, local []int32
		len        int
		next       int32
	}
	var steps, logitsChecked, holes, holeHits int
	lastHole := false // the last step freed a block: a lookahead step queued then read the table before
	// run feeds in[i] to seqs[i] on both runners; with readLogits their
	// logits are compared (no lookahead after).
	run := func(what string, seqs []*seq, in [][]int32, readLogits bool) {
		t.Helper()
		var b, lb batch.Batch
		for i, s := range seqs {
			s.tab = alloc.grow(s.tab, s.len+len(in[i])+32, bs)
			s.local = lalloc.grow(s.local, s.len+len(in[i]), bs) // a block when a position needs it
			b.Add(b.AddSeq(s.tab), in[i], s.len, true)
			lb.Add(lb.AddWindowSeq(s.tab, s.local), in[i], s.len, true)
		}
		if err := lb.CheckLocal(bs, localBlocks, W); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		hits := win.Stats().LookaheadHits
		if err := ref.Forward(&b); err != nil {
			t.Fatalf("%s: one pool: %v", what, err)
		}
		if err := win.Forward(&lb); err != nil {
			t.Fatalf("%s: window pool: %v", what, err)
		}
		steps++
		hole := false
		for i, s := range seqs {
			a, _ := ref.Greedy(i)
			w, _ := win.Greedy(i)
			if a != w {
				t.Fatalf("%s: output %d: argmax %d on one pool, %d with the window pool", what, i, a, w)
			}
			if readLogits {
				got, want := batchLogits(t, win, i), batchLogits(t, ref, i)
				if e := relL2(got, want); e != 0 {
					t.Errorf("%s: output %d: logits differ with the window pool (relative L2 %.3g)", what, i, e)
				}
				logitsChecked++
			}
			s.next = a
			s.len += len(in[i])
			// Free the blocks wholly before the next position's window.
			for j := 0; (j+1)*bs <= s.len-W+1; j++ {
				if s.local[j] != batch.Hole {
					lalloc.free = append(lalloc.free, s.local[j])
					s.local[j] = batch.Hole
					holes++
					hole = true
				}
			}
		}
		if win.Stats().LookaheadHits > hits && lastHole {
			holeHits++
		}
		lastHole = hole
	}
	greedy := func(seqs []*seq) [][]int32 {
		in := make([][]int32, len(seqs))
		for i, s := range seqs {
			in[i] = []int32{s.next}
		}
		return in
	}
	seqs := []*seq{{}, {}, {}}
	run("prompts", seqs, [][]int32{randomPrompt(300, 100, V), randomPrompt(301, 70, V), randomPrompt(302, 60, V)}, true)
	// Sequence 2's next prompt chunk, alone: its first blocks are holes.
	s2 := seqs[2:]
	run("a second prompt chunk", s2, [][]int32{randomPrompt(303, 30, V)}, true)
	for step := range 40 {
		run(fmt.Sprintf("decode of 3, step %d", step), seqs, greedy(seqs), step%13 == 12)
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
	in[2] = randomPrompt(304, 2*bs+9, V)
	run("mixed, a new prompt", seqs, in, true)
	for step := range 12 {
		if step == 5 {
			// Copy on write of sequence 0's partial last block, in both
			// pools (the one-pool runner's window pool at the main ids).
			s := seqs[0]
			last := (s.len - 1) / bs
			dst, ldst := alloc.free[0], lalloc.free[0]
			alloc.free, lalloc.free = alloc.free[1:], lalloc.free[1:]
			for _, err := range []error{ref.CopyBlock(dst, s.tab[last]), ref.CopyLocalBlock(dst, s.tab[last]),
				win.CopyBlock(dst, s.tab[last]), win.CopyLocalBlock(ldst, s.local[last])} {
				if err != nil {
					t.Fatal(err)
				}
			}
			lalloc.free = append(lalloc.free, s.local[last])
			s.tab = append(append([]int32(nil), s.tab[:last]...), dst)
			s.local = append(append([]int32(nil), s.local[:last]...), ldst)
		}
		run(fmt.Sprintf("decode of 3 after, step %d", step), seqs, greedy(seqs), step == 7)
	}
	seqs = seqs[:1]
	for step := range 20 {
		run(fmt.Sprintf("decode of 1, step %d", step), seqs, greedy(seqs), step == 15)
	}
	st := win.Stats()
	t.Logf("%d batches, %d blocks freed; lookahead %d taken (%d right after a free), %d discarded; logits compared %d times",
		steps, holes, st.LookaheadHits, holeHits, st.LookaheadMisses, logitsChecked)
	if holes < 10 || holeHits < 1 || st.LookaheadHits < 10 {
		t.Errorf("%d blocks freed, lookahead taken %d times (%d after a free): want 10, 10 and 1 at least", holes, st.LookaheadHits, holeHits)
	}
}

// hostRunner returns a runner without a device whose host side of the
// inputs (checkLocal, fillDecode, aheadMatches) runs on Go memory: a model
// of four layers, the first and third local with a window of window
// positions (0: none), a main pool of blocks blocks and a window pool of
// localBlocks.
func hostRunner(window, blocks, localBlocks, bs int) (*BatchRunner, []int32) {
	cfg := arch.Config{Layers: 4, Vocab: 100}
	if window > 0 {
		cfg.Window, cfg.Local = window, []bool{true, false, true, false}
	}
	br := &BatchRunner{base: &Model{maxLen: 512}, cfg: cfg, bs: bs, blocks: blocks, scratch: int32(blocks)}
	br.nglobal, br.win = poolLayers(&cfg)
	if br.win {
		br.localBlocks, br.lscratch = localBlocks, int32(localBlocks)
	}
	br.metaCap = 4096
	mem := make([]int32, 2*br.metaCap)
	br.hmeta = uintptr(unsafe.Pointer(&mem[0]))
	return br, mem
}

// TestWindowMetaLayout checks, without a GPU, the inputs of a decode step
// of bucket 4 (three tokens and a padding one): a model without windows
// keeps the layout before the window pool (ids, positions and table
// offsets of B ints each, the sampling rows at 4+3B, one scratch entry,
// then the tables); with one, the window pool's table offsets follow the
// table offsets, the padding token's naming its scratch entry, and each
// sequence's window pool table (holes copied as they are) follows its
// main one, or, without LocalTables, the main table serves both. A
// lookahead step is refused when a window pool table does not reach the
// next position with a block, and taken across a block freed before the
// window, not across a changed block in it.
func TestWindowMetaLayout(t *testing.T) {
	const bs, B, W = 16, 4, 40
	tabs := [][]int32{{3, 4, 5, 6}, {7, 8}, {9}}
	locals := [][]int32{{batch.Hole, 2, 0, 1}, {4, 3}, {5}}
	pos := []int32{56, 20, 7}
	mk := func(local bool) *batch.Batch {
		var b batch.Batch
		for s := range tabs {
			if local {
				b.Add(b.AddWindowSeq(tabs[s], locals[s]), []int32{int32(10 + s)}, int(pos[s]), true)
			} else {
				b.Add(b.AddSeq(tabs[s]), []int32{int32(10 + s)}, int(pos[s]), true)
			}
		}
		return &b
	}
	for _, c := range []struct {
		name         string
		window, rows int
		local        bool
	}{{"no window", 0, 0, false}, {"no window, sampling rows", 0, rowInts, false},
		{"window pool", W, 0, true}, {"window pool, sampling rows", W, rowInts, true}, {"window, no local tables", W, 0, false}} {
		lblocks := 8 // the window pool; without LocalTables the main tables' 64
		if !c.local {
			lblocks = 64
		}
		br, mem := hostRunner(c.window, 64, lblocks, bs)
		b := mk(c.local)
		if err := b.Check(br.cfg.Vocab, 512, bs, br.blocks); err != nil {
			t.Fatal(err)
		}
		if err := br.checkLocal(b); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		total, _ := br.fillDecode(0, b, B, 0, c.rows > 0)
		m := mem[:br.metaCap]
		arrays := 3
		if c.window > 0 {
			arrays = 4
		}
		tab0 := 4 + arrays*B + c.rows*B
		if br.rowsOff(B) != 4+arrays*B {
			t.Errorf("%s: rows at %d, want %d", c.name, br.rowsOff(B), 4+arrays*B)
		}
		k := tab0 + arrays - 2 // past the scratch entries
		for s := range tabs {
			need := int(pos[s])/bs + 1
			if m[4+s] != int32(10+s) || m[4+B+s] != pos[s] || int(m[4+2*B+s]) != k {
				t.Errorf("%s: token %d: id %d, position %d, table at %d; want %d, %d, %d", c.name, s, m[4+s], m[4+B+s], m[4+2*B+s], 10+s, pos[s], k)
			}
			if got := m[k : k+need]; fmt.Sprint(got) != fmt.Sprint(tabs[s][:need]) {
				t.Errorf("%s: token %d: table %v, want %v", c.name, s, got, tabs[s][:need])
			}
			lk := k
			k += need
			if c.local {
				lk = k
				if got := m[k : k+need]; fmt.Sprint(got) != fmt.Sprint(locals[s][:need]) {
					t.Errorf("%s: token %d: window pool table %v, want %v", c.name, s, got, locals[s][:need])
				}
				k += need
			}
			if c.window > 0 && int(m[4+3*B+s]) != lk {
				t.Errorf("%s: token %d: window pool table at %d, want %d", c.name, s, m[4+3*B+s], lk)
			}
		}
		if total != roundUp(k, 4) {
			t.Errorf("%s: %d ints, want %d", c.name, total, roundUp(k, 4))
		}
		if m[4+2*B+3] != int32(tab0) || m[tab0] != 64 {
			t.Errorf("%s: the padding token's table at %d (entry %d), want %d (the scratch block 64)", c.name, m[4+2*B+3], m[m[4+2*B+3]], tab0)
		}
		if c.window > 0 && (m[4+3*B+3] != int32(tab0+1) || m[tab0+1] != int32(lblocks)) {
			t.Errorf("%s: the padding token's window pool table at %d (entry %d), want %d (the scratch block %d)", c.name, m[4+3*B+3], m[m[4+3*B+3]], tab0+1, lblocks)
		}
		// Forward's room: the tables and a lookahead's (twice with
		// LocalTables), two sampling rows an output.
		tab := 4 + 2 + 1 + 3
		if c.local {
			tab *= 2
		}
		if need := br.metaInts(3, tab) + 2*3*c.rows; need < total {
			t.Errorf("%s: metaInts %d for %d ints", c.name, need, total)
		}
	}

	// The lookahead: positions 57, 21, 8 are in blocks the tables hold.
	br, mem := hostRunner(W, 64, 8, bs)
	b := mk(true)
	if total, _ := br.fillDecode(1, b, B, 1, false); total == 0 {
		t.Fatal("lookahead refused")
	}
	br.ids = []int32{21, 22, 23}
	a := lookahead{on: true, slot: 1, n: 3, B: B}
	next := func(edit func(*batch.Batch)) bool {
		var nb batch.Batch
		for s := range tabs {
			nb.Add(nb.AddWindowSeq(append([]int32(nil), tabs[s]...), append([]int32(nil), locals[s]...)), []int32{br.ids[s]}, int(pos[s])+1, true)
		}
		edit(&nb)
		return br.aheadMatches(&nb, a)
	}
	if !next(func(*batch.Batch) {}) {
		t.Error("the lookahead's own batch does not match it")
	}
	// Position 57's window starts at 18: block 1 (positions 16..31) is read.
	if next(func(nb *batch.Batch) { nb.LocalTables[0][1] = 6 }) {
		t.Error("a changed block in the window matched")
	}
	if next(func(nb *batch.Batch) { nb.LocalTables[0][3] = 6 }) {
		t.Error("a changed last block matched")
	}
	if next(func(nb *batch.Batch) { nb.Tables[1][1] = 6 }) {
		t.Error("a changed main block matched")
	}
	// A block freed since the lookahead was queued: sequence 0 at 60 reads
	// from 21 on (block 1), its block 0 held when the step was queued, at
	// 59 (whose window starts at 20).
	pos[0] = 59
	locals[0][0] = 6
	b = mk(true)
	if total, _ := br.fillDecode(1, b, B, 1, false); total == 0 {
		t.Fatal("lookahead refused")
	}
	if !next(func(nb *batch.Batch) { nb.LocalTables[0][0] = batch.Hole }) {
		t.Error("a block freed before the window did not match")
	}
	if next(func(nb *batch.Batch) { nb.LocalTables[0][1] = batch.Hole }) {
		t.Error("a block freed in the window matched")
	}
	// Refused: a window pool table that does not reach the next position,
	// or reaches it with a hole or a block past the pool.
	for name, edit := range map[string]func(b *batch.Batch){
		"short":         func(b *batch.Batch) { b.LocalTables[2] = b.LocalTables[2][:0:0]; b.Pos[2] = 15 },
		"hole":          func(b *batch.Batch) { b.LocalTables[1] = []int32{4, 3, batch.Hole}; b.Pos[1] = 31 },
		"past the pool": func(b *batch.Batch) { b.LocalTables[1] = []int32{4, 3, 8}; b.Pos[1] = 31 },
	} {
		b := mk(true)
		edit(b)
		if total, _ := br.fillDecode(1, b, B, 1, false); total != 0 {
			t.Errorf("lookahead over a window pool table %s: %d ints", name, total)
		}
	}
	runtime.KeepAlive(mem)
}

// TestWindowCheckLocal checks, without a GPU, what Forward refuses of a
// batch's tables for the window pool: a hole or a block past the window
// pool in a sequence's window, a table that does not reach its last
// token, main tables naming blocks past a smaller window pool (no
// LocalTables), and LocalTables for a model without windows; and what it
// takes: holes before the first token's window.
func TestWindowCheckLocal(t *testing.T) {
	const bs, W = 16, 40
	br, _ := hostRunner(W, 64, 8, bs)
	good := func() *batch.Batch {
		var b batch.Batch
		// A chunk at 60..69: its first token's window starts at 21 (block 1).
		b.Add(b.AddWindowSeq([]int32{10, 11, 12, 13, 14}, []int32{batch.Hole, 2, 0, 1, 7}), make([]int32, 10), 60, true)
		b.Add(b.AddWindowSeq([]int32{20}, []int32{3}), []int32{1}, 5, true)
		return &b
	}
	if err := br.checkLocal(good()); err != nil {
		t.Fatalf("good batch: %v", err)
	}
	for name, edit := range map[string]func(b *batch.Batch){
		"hole in the window":       func(b *batch.Batch) { b.LocalTables[0][1] = batch.Hole },
		"block past the pool":      func(b *batch.Batch) { b.LocalTables[0][4] = 8 },
		"table short of the token": func(b *batch.Batch) { b.LocalTables[0] = b.LocalTables[0][:4] },
		"a table missing":          func(b *batch.Batch) { b.LocalTables = b.LocalTables[:1] },
	} {
		b := good()
		edit(b)
		if err := br.checkLocal(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	var b batch.Batch
	b.Add(b.AddSeq([]int32{7}), []int32{1}, 0, true)
	if err := br.checkLocal(&b); err != nil {
		t.Errorf("main tables within the window pool: %v", err)
	}
	b.Tables[0][0] = 8
	if err := br.checkLocal(&b); err == nil || !strings.Contains(err.Error(), "window pool") {
		t.Errorf("main tables past the window pool: %v", err)
	}
	plain, _ := hostRunner(0, 64, 0, bs)
	if err := plain.checkLocal(good()); err == nil {
		t.Error("local tables for a model without windows: no error")
	}
	if err := plain.CopyLocalBlock(0, 1); err == nil {
		t.Error("CopyLocalBlock without a window pool: no error")
	}
	if n, w := plain.WindowPool(); n != 0 || w != 0 {
		t.Errorf("WindowPool without windows: %d, %d", n, w)
	}
}

// windowPoolSizes checks the pools sized from the free memory (at most 256
// sequences of MaxLen positions in the main pool; the window pool as
// large, or as given) and a window pool past the free memory refused in
// one line.
func windowPoolSizes(t *testing.T, r *Model, win *BatchRunner, bs int) {
	maxBlocks := 256 * ((r.maxLen + bs - 1) / bs)
	bb, lbb := uint64(win.blockBytes()), uint64(win.localBlockBytes())
	if bb == 0 || lbb == 0 || bb+lbb != uint64(2*r.cfg.Layers*r.cfg.KVDim()*2*bs) {
		t.Errorf("blocks of %d and %d bytes in the two pools", bb, lbb)
	}
	for _, lb := range []int{0, 50} {
		auto, err := r.NewWindowBatchRunner(0, lb, bs)
		if err != nil {
			t.Fatal(err)
		}
		want := lb
		if lb == 0 {
			want = maxBlocks
		}
		st := auto.Stats()
		if n, _ := auto.WindowPool(); auto.Blocks() != maxBlocks || n != want || st.LocalBlocks != want ||
			st.PoolBytes != uint64(maxBlocks+1)*bb+uint64(want+1)*lbb {
			t.Errorf("pools sized from the free memory (window pool %d): %d and %d blocks, %d bytes", lb, auto.Blocks(), n, st.PoolBytes)
		}
		if err := auto.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.dev.enter(); err != nil {
		t.Fatal(err)
	}
	free, err := r.dev.freeMemory()
	r.dev.exit()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.NewWindowBatchRunner(16, int(free/lbb), bs); err == nil || !strings.Contains(err.Error(), "window pool") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a window pool as large as the free memory: %v", err)
	}
}

// TestWindowFootprint checks, without a GPU, the memory estimate of a
// model with a window pool: the global layers' keys and values at every
// position, the sliding-window layers' at Window+MaxBatch at most.
func TestWindowFootprint(t *testing.T) {
	for _, c := range windowCases {
		m := optModel(t, c)
		h := &m.Config
		local := 0
		for i := range h.Layers {
			if h.LayerWindow(i) > 0 {
				local++
			}
		}
		if local == 0 || local == h.Layers {
			t.Fatalf("%s: %d local layers of %d", c.name, local, h.Layers)
		}
		kvd := int64(h.KVDim())
		f := estimateFootprint(m, 32768)
		if f.kvPerPos != 4*int64(h.Layers-local)*kvd || f.windowKV != 4*int64(local)*kvd*int64(h.Window+MaxBatch) ||
			f.kv != f.kvPerPos*32768+f.windowKV {
			t.Errorf("%s: %d bytes a position, window pool %d, KV %d", c.name, f.kvPerPos, f.windowKV, f.kv)
		}
		if s := estimateFootprint(m, 100); s.windowKV != 4*int64(local)*kvd*100 {
			t.Errorf("%s: window pool of a short context %d bytes", c.name, s.windowKV)
		}
		err := fitError(f, uint64(f.weights+f.scratch+f.windowKV+f.kvPerPos*1024), "NVIDIA X")
		if err == nil || !strings.Contains(err.Error(), "window pool") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: refusal %v", c.name, err)
		}
	}
}

// TestWindowGeneralLayout checks, without a GPU, the inputs of a pass
// that general runs (a prompt chunk whose first window pool block is a
// hole and a decode token): a model without windows keeps the layout
// before the window pool (ids, positions, table offsets, the decode list
// at 4+3n, tiles, outputs, then the tables); with one, the window pool's
// table offsets come before the decode list, each run's window pool table
// after its main one, or without LocalTables its main one's offsets.
func TestWindowGeneralLayout(t *testing.T) {
	const bs, W, qt = 16, 40, 16
	tabs := [][]int32{{10, 11, 12, 13, 14}, {20}}
	locals := [][]int32{{batch.Hole, 2, 0, 1, 7}, {3}}
	for _, c := range []struct {
		name   string
		window int
		local  bool
	}{{"no window", 0, false}, {"window pool", W, true}, {"window, no local tables", W, false}} {
		br, mem := hostRunner(c.window, 64, 64, bs)
		var b batch.Batch
		for s, n := range []int{20, 1} {
			pos := []int{60, 5}[s]
			if c.local {
				b.Add(b.AddWindowSeq(tabs[s], locals[s]), randomPrompt(uint64(s), n, 100), pos, true)
			} else {
				b.Add(b.AddSeq(tabs[s]), randomPrompt(uint64(s), n, 100), pos, true)
			}
		}
		if err := b.Check(100, 512, bs, 64); err != nil {
			t.Fatal(err)
		}
		if err := br.checkLocal(&b); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		br.runs = b.Runs(nil)
		in := br.fillGeneral(&b, qt, 1, 2)
		m := mem[:br.metaCap]
		n := b.Len()
		arrays := 3
		if c.window > 0 {
			arrays = 4
		}
		if in.tok != 4 || in.pos != 4+n || in.toff != 4+2*n || in.dec != 4+arrays*n || in.tile != in.dec+1 || in.out != in.tile+4 || in.hid != in.out+2 {
			t.Errorf("%s: layout %+v for %d tokens", c.name, in, n)
		}
		if m[in.dec] != 20 || fmt.Sprint(m[in.tile:in.tile+4]) != "[0 16 16 4]" || fmt.Sprint(m[in.out:in.out+2]) != "[19 20]" {
			t.Errorf("%s: decode list %d, tiles %v, outputs %v", c.name, m[in.dec], m[in.tile:in.tile+4], m[in.out:in.out+2])
		}
		k := in.hid
		for s, r := range br.runs {
			need := (r.Pos+r.N-1)/bs + 1
			main, local := k, k
			k += need
			if c.local {
				local = k
				k += need
			}
			for tok := r.Start; tok < r.Start+r.N; tok++ {
				if int(m[in.toff+tok]) != main || c.window > 0 && int(m[in.ltoff+tok]) != local {
					t.Fatalf("%s: token %d: tables at %d and %d, want %d and %d", c.name, tok, m[in.toff+tok], m[in.ltoff+tok], main, local)
				}
			}
			if fmt.Sprint(m[main:main+need]) != fmt.Sprint(tabs[s][:need]) || c.local && fmt.Sprint(m[local:local+need]) != fmt.Sprint(locals[s][:need]) {
				t.Errorf("%s: sequence %d: tables %v and %v", c.name, s, m[main:main+need], m[local:local+need])
			}
		}
		if in.total != roundUp(k, 4) {
			t.Errorf("%s: %d ints, want %d", c.name, in.total, roundUp(k, 4))
		}
		tab := 5 + 1 + n // the tables, and Forward's room for a lookahead's
		if c.local {
			tab *= 2
		}
		if need := br.metaInts(n, tab); need < in.total {
			t.Errorf("%s: metaInts %d for %d ints", c.name, need, in.total)
		}
		runtime.KeepAlive(mem)
	}
}

// TestWindowPoolLayers checks which models get a window pool: those with
// sliding-window layers and others, the main pool then holding the
// others'; without windows, or with every layer local, one pool holds
// every layer's.
func TestWindowPoolLayers(t *testing.T) {
	for _, c := range []struct {
		local []bool
		main  int
		win   bool
	}{
		{nil, 4, false},
		{[]bool{true, false, true, false}, 2, true},
		{[]bool{true, true, true, false}, 1, true},
		{[]bool{true, true, true, true}, 4, false},
	} {
		cfg := arch.Config{Layers: 4, Local: c.local}
		if c.local != nil {
			cfg.Window = 40
		}
		if main, win := poolLayers(&cfg); main != c.main || win != c.win {
			t.Errorf("local layers %v: %d in the main pool, window pool %v; want %d, %v", c.local, main, win, c.main, c.win)
		}
	}
}
