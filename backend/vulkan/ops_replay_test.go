package vulkan

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"inferno/arch"
	"inferno/backend"
	"inferno/backend/internal/attntest"
	"inferno/backend/scalar"
	"inferno/numfmt"
)

// TestOpsDecodeReplay records a decode step's RoPE, cache store and
// attention (rope_store, attn cut into runs of keys, attn_combine, with
// barriers) on packed QKV rows in one command buffer and replays it step
// after step, writing only the step's rows and positions in between, as
// the runner does; each step's output is compared with the scalar
// backend's (scalar.RoPE, then attention on a cache kept alongside with
// scalar's ToF16), and the cache at the end with that cache: bit for bit
// on amd64 (where rope_store's rotation has the CPU's bits), within one
// half-precision step elsewhere.
func TestOpsDecodeReplay(t *testing.T) {
	r := newOpsRig(t)
	rng := rand.New(rand.NewPCG(13, 14))
	const nKV, group, headDim, blockSize, steps = 2, 4, 64, 16, 12
	const nHeads, kvDim = nKV * group, nKV * headDim
	const width = (nHeads + 2*nKV) * headDim // a packed QKV row
	const maxPos = 128
	rope := &arch.Rope{Theta: 10000}
	tab, err := RopeTable(rope, headDim, maxPos)
	if err != nil {
		t.Fatal(err)
	}
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
	qkv := r.buf(make([]byte, 4*b*width))
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
	store := pushRopeStore{X: qkv.Addr(), Pos: pb.Addr(), Seq: sb.Addr(), Tab: r.f32(tab).Addr(), QGain: qkv.Addr(), KGain: qkv.Addr(),
		KC: kc.Addr(), VC: vc.Addr(), Tables: tb.Addr(), TabOff: ob.Addr(), Tokens: uint32(b), NQ: nHeads, NKV: nKV,
		HeadDim: headDim, RotDims: headDim, Style: ropeStyle(rope.Style), MaxPos: maxPos, Stride: width,
		BlockSize: blockSize, Flags: ropeStore}
	attn := pushAttn{Q: qkv.Addr(), Out: out.Addr(), KC: kc.Addr(), VC: vc.Addr(), Pos: pb.Addr(), Seq: sb.Addr(),
		Tables: tb.Addr(), TabOff: ob.Addr(), Tiles: r.i32(tiles).Addr(), Sinks: sinks.Addr(), Part: part.Addr(),
		NTiles: uint32(b), NHeads: nHeads, NKV: nKV, BlockSize: blockSize, Splits: splits, QStride: width}
	opt := backend.AttnOpts{}
	attn.setOpts(&opt, headDim)
	comb := pushAttnCombine{Part: part.Addr(), Out: out.Addr(), Sinks: sinks.Addr(), Rows: uint32(b * nHeads),
		NHeads: nHeads, HeadDim: headDim, Splits: splits}
	rec, err := r.d.Record()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	gx, gy := groups2D(b*(nHeads+2*nKV)*headDim/2, elementWG)
	rec.Dispatch(pipe("rope_store", elementWG), gx, gy, 1, PushBytes(&store))
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
		rows := randF32(rng, b*width, 2)
		q := make([]float32, b*nHeads*headDim)
		for i := range seqs {
			seqs[i].Pos = start[i] + step
			pos[i] = int32(seqs[i].Pos)
			row := rows[i*width : (i+1)*width]
			qi, k := q[i*nHeads*headDim:(i+1)*nHeads*headDim], make([]float32, kvDim)
			copy(qi, row)
			copy(k, row[nHeads*headDim:])
			s.RoPE(qi, pos[i:i+1], nHeads, headDim, headDim, rope)
			s.RoPE(k, pos[i:i+1], nKV, headDim, headDim, rope)
			at := int(seqs[i].Table[seqs[i].Pos/blockSize])*blockSize + seqs[i].Pos%blockSize
			s.ToF16(kh[at*kvDim:(at+1)*kvDim], k)
			s.ToF16(vh[at*kvDim:(at+1)*kvDim], row[nHeads*headDim+kvDim:])
		}
		for _, w := range []struct {
			b   *Buffer
			src []byte
		}{{qkv, F32Bytes(rows)}, {pb, I32Bytes(pos)}} {
			if err := r.d.Write(w.b, 0, w.src); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.d.Replay(rec); err != nil {
			t.Fatal(err)
		}
		want := make([]float32, len(q))
		s.AttentionF16(want, q, attntest.HeadMajor(kh, blockSize, nKV, headDim), attntest.HeadMajor(vh, blockSize, nKV, headDim), seqs, blockSize, nHeads, nKV, headDim, opt)
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
			d := int(got[i]) - int(c.want[i])
			if d != 0 && (runtime.GOARCH == "amd64" || got[i]>>15 != c.want[i]>>15 || d < -1 || d > 1) {
				t.Fatalf("%s: cache value %d is %#04x after %d steps, want %#04x (%v)", c.name, i, got[i], steps, c.want[i], numfmt.F16ToF32(c.want[i]))
			}
		}
	}
}
