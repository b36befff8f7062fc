package vulkan

import (
	"math/rand/v2"
	"testing"

	"inferno/backend"
	"inferno/backend/scalar"
	"inferno/numfmt"
)

// TestOpsDecodeReplay records a decode step's cache store and attention
// (kv_store, attn cut into runs of keys, attn_combine, with barriers) in
// one command buffer and replays it step after step, writing only the
// step's keys, values, queries and positions in between, as the runner
// does; each step's output is compared with the scalar backend's on a
// cache kept alongside with scalar's ToF16.
func TestOpsDecodeReplay(t *testing.T) {
	r := newOpsRig(t)
	rng := rand.New(rand.NewPCG(13, 14))
	const nKV, group, headDim, blockSize, steps = 2, 4, 64, 16, 12
	const nHeads, kvDim = nKV * group, nKV * headDim
	start := []int{0, 7, 60} // the sequences' first positions
	b := len(start)
	nBlocks := 0
	seqs := make([]backend.SeqAttn, b)
	for i, p := range start {
		seqs[i] = backend.SeqAttn{Token: i, N: 1, Pos: p}
		nBlocks += (p + steps + blockSize - 1) / blockSize
	}
	perm := rng.Perm(nBlocks)
	for i := range seqs {
		n := (start[i] + steps + blockSize - 1) / blockSize
		for range n {
			seqs[i].Table = append(seqs[i].Table, int32(perm[0]))
			perm = perm[1:]
		}
	}
	// The positions before each sequence's first: already in the cache.
	s := scalar.NewScalar()
	kh, vh := make([]uint16, nBlocks*blockSize*kvDim), make([]uint16, nBlocks*blockSize*kvDim)
	s.ToF16(kh, randF32(rng, len(kh), 2))
	s.ToF16(vh, randF32(rng, len(vh), 2))
	kc, vc := r.u16(kh), r.u16(vh)

	pos, seq, tables, tabOff, err := BlockTables(seqs, b)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := pickAttnShape(headDim, group, r.d.SubgroupSize, r.d.SharedMemory, false)
	if err != nil {
		t.Fatal(err)
	}
	const splits = 3
	tiles := AttnTiles(seqs, 1)
	kb, vb, qb := r.buf(make([]byte, 4*b*kvDim)), r.buf(make([]byte, 4*b*kvDim)), r.buf(make([]byte, 4*b*nHeads*headDim))
	pb, sb, tb, ob := r.i32(pos), r.i32(seq), r.i32(tables), r.i32(tabOff)
	out, part := r.buf(make([]byte, 4*b*nHeads*headDim)), r.buf(make([]byte, 4*b*nHeads*splits*(headDim+2)))
	sinks := r.f32([]float32{0})

	pipe := func(name string, spec ...uint32) *Pipeline {
		p, err := r.d.Pipeline(name, spec...)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	store := pushKVStore{K: kb.Addr(), V: vb.Addr(), KC: kc.Addr(), VC: vc.Addr(), Pos: pb.Addr(), Seq: sb.Addr(),
		Tables: tb.Addr(), TabOff: ob.Addr(), Tokens: uint32(b), KVDim: kvDim, BlockSize: blockSize, Stride: kvDim}
	attn := pushAttn{Q: qb.Addr(), Out: out.Addr(), KC: kc.Addr(), VC: vc.Addr(), Pos: pb.Addr(), Seq: sb.Addr(),
		Tables: tb.Addr(), TabOff: ob.Addr(), Tiles: r.i32(tiles).Addr(), Sinks: sinks.Addr(), Part: part.Addr(),
		NTiles: uint32(b), NHeads: nHeads, NKV: nKV, BlockSize: blockSize, Splits: splits, QStride: nHeads * headDim}
	opt := backend.AttnOpts{}
	attn.setOpts(&opt, headDim)
	comb := pushAttnCombine{Part: part.Addr(), Out: out.Addr(), Sinks: sinks.Addr(), Rows: uint32(b * nHeads),
		NHeads: nHeads, HeadDim: headDim, Splits: splits}
	rec, err := r.d.Record()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	gx, gy := groups2D(b*kvDim/2, elementWG)
	rec.Dispatch(pipe("kv_store", elementWG), gx, gy, 1, PushBytes(&store))
	rec.Barrier()
	ax, ay, az := attnGroups(b, nHeads, sh, splits)
	rec.Dispatch(pipe("attn", sh.spec()...), ax, ay, az, PushBytes(&attn))
	rec.Barrier()
	cx, cy := groups2D(b*nHeads, 1)
	rec.Dispatch(pipe("attn_combine", rowWG(headDim, r.d.SubgroupSize)), cx, cy, 1, PushBytes(&comb))
	if err := rec.End(); err != nil {
		t.Fatal(err)
	}

	for step := range steps {
		k, v, q := randF32(rng, b*kvDim, 2), randF32(rng, b*kvDim, 2), randF32(rng, b*nHeads*headDim, 1)
		for i := range seqs {
			seqs[i].Pos = start[i] + step
			pos[i] = int32(seqs[i].Pos)
			row := int(seqs[i].Table[seqs[i].Pos/blockSize])*blockSize + seqs[i].Pos%blockSize
			s.ToF16(kh[row*kvDim:(row+1)*kvDim], k[i*kvDim:(i+1)*kvDim])
			s.ToF16(vh[row*kvDim:(row+1)*kvDim], v[i*kvDim:(i+1)*kvDim])
		}
		for _, w := range []struct {
			b   *Buffer
			src []byte
		}{{kb, F32Bytes(k)}, {vb, F32Bytes(v)}, {qb, F32Bytes(q)}, {pb, I32Bytes(pos)}} {
			if err := r.d.Write(w.b, 0, w.src); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.d.Replay(rec); err != nil {
			t.Fatal(err)
		}
		want := make([]float32, len(q))
		s.AttentionF16(want, q, kh, vh, seqs, blockSize, nHeads, nKV, headDim, opt)
		if e := relL2(r.readF32(out, len(q)), want); !(e <= 1e-4) {
			t.Fatalf("step %d (positions %v): relative L2 error %.3g", step, pos, e)
		}
	}
	for _, c := range []struct {
		name string
		b    *Buffer
		want []uint16
	}{{"keys", kc, kh}, {"values", vc, vh}} {
		got := bytesU16(r.read(c.b, 2*len(c.want)))
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("%s: cache value %d is %#04x after %d steps, want %#04x (%v)", c.name, i, got[i], steps, c.want[i], numfmt.F16ToF32(c.want[i]))
			}
		}
	}
}
