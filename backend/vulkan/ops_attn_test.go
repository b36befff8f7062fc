package vulkan

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"inferno/backend"
	"inferno/backend/internal/attntest"
	"inferno/backend/scalar"
	"inferno/numfmt"
)

// attnCase is one attention call of TestOpsAttention: the heads, the
// sequences (N query tokens at positions Pos..Pos+N-1; their rows of the
// batch and tables are made by the test) and the options.
type attnCase struct {
	nKV, group, headDim int
	seqs                []backend.SeqAttn
	window              int
	sinks               bool
	scale               float32
}

// TestOpsAttention compares attn with scalar.AttentionF16 (relative L2
// error at most 1e-4) on decode and prompt shapes: heads of 64, 128 and
// 256 values, 1, 4 and 8 query heads a KV head, sequences at different
// positions in one batch (their rows not in sequence order), block tables
// out of order, blocks of 16 positions, sliding windows and sinks. Each
// case runs with the decode shape (a token a workgroup), the prompt shape
// (tiles of tokens) and a shape of fewer invocations than value pairs
// (reading the queries from a fused QKV product's rows),
// each with all the keys in one workgroup and cut into runs that
// attn_combine merges (some runs past the keys of short sequences), and
// decode at depth with the runs attnSplits picks.
func TestOpsAttention(t *testing.T) {
	r := newOpsRig(t)
	rng := rand.New(rand.NewPCG(11, 12))
	dec := func(pos ...int) []backend.SeqAttn {
		var s []backend.SeqAttn
		for _, p := range pos {
			s = append(s, backend.SeqAttn{N: 1, Pos: p})
		}
		return s
	}
	cases := []attnCase{
		{nKV: 2, group: 4, headDim: 128, seqs: dec(0, 17, 300)},
		{nKV: 4, group: 1, headDim: 64, seqs: []backend.SeqAttn{{N: 40, Pos: 0}, {N: 20, Pos: 33}, {N: 1, Pos: 100}}, window: 24, sinks: true},
		{nKV: 1, group: 8, headDim: 128, seqs: []backend.SeqAttn{{N: 1, Pos: 250}, {N: 33, Pos: 5}}, sinks: true, scale: 0.1},
		{nKV: 2, group: 8, headDim: 64, seqs: dec(130, 3, 47), window: 50},
		{nKV: 2, group: 4, headDim: 64, seqs: []backend.SeqAttn{{N: 17, Pos: 64}, {N: 1, Pos: 15}, {N: 1, Pos: 16}}, window: 16},
		{nKV: 1, group: 2, headDim: 256, seqs: []backend.SeqAttn{{N: 9, Pos: 70}, {N: 1, Pos: 200}}, sinks: true},
		{nKV: 2, group: 4, headDim: 128, seqs: dec(3000, 1500), sinks: true},                // decode at depth: attnSplits' runs
		{nKV: 2, group: 8, headDim: 64, seqs: dec(2999, 700, 1), window: 1000, scale: 0.05}, // and with a window
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("case%d_hd%d_g%d", i, c.headDim, c.group), func(t *testing.T) {
			r.t = t
			testAttnCase(r, rng, c)
		})
	}
}

// testAttnCase runs one case of TestOpsAttention.
func testAttnCase(r *opsRig, rng *rand.Rand, c attnCase) {
	t := r.t
	const blockSize = 16
	nHeads := c.nKV * c.group
	kvDim := c.nKV * c.headDim
	// Rows of the batch: the sequences in reverse order; tables from a
	// shuffled pool of blocks with some left unused.
	seqs := append([]backend.SeqAttn(nil), c.seqs...)
	tokens := 0
	for i := len(seqs) - 1; i >= 0; i-- {
		seqs[i].Token = tokens
		tokens += seqs[i].N
	}
	nBlocks := 3
	for _, s := range seqs {
		nBlocks += (s.Pos + s.N + blockSize - 1) / blockSize
	}
	perm := rng.Perm(nBlocks)
	for i := range seqs {
		n := (seqs[i].Pos + seqs[i].N + blockSize - 1) / blockSize
		seqs[i].Table = make([]int32, n)
		for j := range n {
			seqs[i].Table[j] = int32(perm[0])
			perm = perm[1:]
		}
	}
	toF16 := func(v []float32) []uint16 {
		h := make([]uint16, len(v))
		for i, x := range v {
			h[i] = numfmt.F32ToF16(x)
		}
		return h
	}
	k := toF16(randF32(rng, nBlocks*blockSize*kvDim, 2))
	v := toF16(randF32(rng, nBlocks*blockSize*kvDim, 2))
	q := randF32(rng, tokens*nHeads*c.headDim, 1)
	opt := backend.AttnOpts{Scale: c.scale, Window: c.window}
	if c.sinks {
		opt.Sinks = randF32(rng, nHeads, 3)
	}
	want := make([]float32, len(q))
	// The CPU backends' blocks are head-major; this backend's rows are a
	// position's heads together.
	scalar.NewScalar().AttentionF16(want, q, attntest.HeadMajor(k, blockSize, c.nKV, c.headDim), attntest.HeadMajor(v, blockSize, c.nKV, c.headDim), seqs, blockSize, nHeads, c.nKV, c.headDim, opt)

	pos, seq, tables, tabOff, err := BlockTables(seqs, tokens)
	if err != nil {
		t.Fatal(err)
	}
	// The queries packed, and as the first part of a fused QKV product's
	// rows (the narrow shape reads those).
	qDim := nHeads * c.headDim
	qWidth := qDim + 2*kvDim
	fused := randF32(rng, tokens*qWidth, 1)
	for tk := range tokens {
		copy(fused[tk*qWidth:], q[tk*qDim:(tk+1)*qDim])
	}
	qb, qf, kc, vc := r.f32(q), r.f32(fused), r.u16(k), r.u16(v)
	pb, sb, tb, ob := r.i32(pos), r.i32(seq), r.i32(tables), r.i32(tabOff)
	sinkVals := opt.Sinks
	if sinkVals == nil {
		sinkVals = []float32{0} // not read: setOpts clears the address
	}
	sinks := r.f32(sinkVals)
	dev, err := pickAttnShape(c.headDim, c.group, r.d.SubgroupSize, r.d.SharedMemory, false)
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := pickAttnShape(c.headDim, c.group, r.d.SubgroupSize, r.d.SharedMemory, true)
	if err != nil {
		t.Fatal(err)
	}
	narrow := attnShape{WG: 32, HPW: uint32(min(c.group, 2)), TQ: 3, D: uint32(c.headDim)}
	keys := 0
	for _, sq := range seqs {
		keys = max(keys, sq.Pos+sq.N)
	}
	runs := []struct {
		sh     attnShape
		splits int
	}{{dev, 1}, {dev, 4}, {prompt, 1}, {prompt, 2}, {narrow, 1}, {narrow, 3}}
	if n := attnSplits(len(AttnTiles(seqs, 1))/2, nHeads, keys, dev); n > 1 {
		runs = append(runs, runs[0])
		runs[len(runs)-1].splits = n
	}
	for _, run := range runs {
		sh := run.sh
		if sh.shared() > r.d.SharedMemory {
			continue
		}
		tiles := AttnTiles(seqs, int(sh.TQ))
		out := r.buf(make([]byte, 4*len(q)))
		part := out // not read with one run
		if run.splits > 1 {
			part = r.buf(make([]byte, 4*tokens*nHeads*run.splits*(c.headDim+2)))
		}
		qAddr, qStride := qb.Addr(), qDim
		if sh == narrow {
			qAddr, qStride = qf.Addr(), qWidth
		}
		push := pushAttn{Q: qAddr, QStride: uint32(qStride), Out: out.Addr(), KC: kc.Addr(), VC: vc.Addr(), Pos: pb.Addr(), Seq: sb.Addr(),
			Tables: tb.Addr(), TabOff: ob.Addr(), Tiles: r.i32(tiles).Addr(), Sinks: sinks.Addr(), Part: part.Addr(),
			NTiles: uint32(len(tiles) / 2), NHeads: uint32(nHeads), NKV: uint32(c.nKV), BlockSize: blockSize,
			Splits: uint32(run.splits)}
		push.setOpts(&opt, c.headDim)
		gx, gy, gz := attnGroups(len(tiles)/2, nHeads, sh, run.splits)
		r.run("attn", sh.spec(), gx, gy, gz, PushBytes(&push))
		if run.splits > 1 {
			rows := tokens * nHeads
			gx, gy := groups2D(rows, 1)
			comb := pushAttnCombine{Part: part.Addr(), Out: out.Addr(), Sinks: sinks.Addr(), Rows: uint32(rows),
				NHeads: uint32(nHeads), HeadDim: uint32(c.headDim), Splits: uint32(run.splits), HasSinks: hasSinks(push.Sinks)}
			r.run("attn_combine", []uint32{rowWG(c.headDim, r.d.SubgroupSize)}, gx, gy, 1, PushBytes(&comb))
		}
		got := r.readF32(out, len(q))
		e := relL2(got, want)
		if !(e <= 1e-4) {
			t.Errorf("shape %+v, %d runs of keys: relative L2 error %.3g", sh, run.splits, e)
		}
		t.Logf("shape %+v, %d runs of keys: relative L2 error %.3g", sh, run.splits, e)
		// Each token alone too: a wrong row is not hidden by the others.
		w := nHeads * c.headDim
		for tk := range tokens {
			if e := relL2(got[tk*w:(tk+1)*w], want[tk*w:(tk+1)*w]); !(e <= 1e-4) {
				t.Errorf("shape %+v, %d runs of keys: token %d (position %d of sequence %d): relative L2 error %.3g", sh, run.splits, tk, pos[tk], seq[tk], e)
				break
			}
		}
	}
}
