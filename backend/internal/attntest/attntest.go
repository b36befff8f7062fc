// Package attntest checks the paged, batched attention and the per-token
// RoPE of a backend.Ops against the same work done one sequence at a time
// in the layout of one contiguous cache, for the tests of the CPU
// backends.
package attntest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"inferno/arch"
	"inferno/backend"
	"inferno/internal/floatbits"
	"inferno/numfmt"
)

// Shape is the heads of an attention call.
type Shape struct{ Heads, KV, HeadDim int }

// Shapes cover the kernels' paths: Qwen3-0.6B's heads, heads of 32 values
// (the assembly's smallest), heads the accumulation kernels leave to Go
// (24 values), and groups of three query heads (a two-head and a one-head
// kernel call).
var Shapes = []Shape{{16, 8, 128}, {4, 2, 32}, {6, 3, 24}, {3, 1, 64}}

// BlockSizes are the block sizes batches are checked with: one position,
// blocks smaller and larger than and equal to the kernels' chunks of 64
// positions, a size that is no power of two, and a block larger than any
// sequence.
var BlockSizes = []int{1, 16, 32, 64, 100, 512}

// A Batch is an attention call over sequences of random keys and values,
// stored both in a paged cache, in blocks given out in random order, and
// each sequence alone in one contiguous block.
type Batch struct {
	Shape
	BlockSize int
	// Opt are the options Run and RunAlone call with; Run leaves out the
	// table entries of the blocks before a sequence's window (-1), which
	// attention must not read.
	Opt    backend.AttnOpts
	Seqs   []backend.SeqAttn
	Tokens int       // query tokens (rows of Q and of the output)
	Q      []float32 // Tokens rows; those of no sequence are never read
	K, V   []float32 // the paged cache; rows no sequence holds are NaN
	KH, VH []uint16  // the same in half precision; unused rows NaN

	// Each sequence alone: its queries, and keys and values by position.
	SeqQ, SeqK, SeqV [][]float32
	SeqKH, SeqVH     [][]uint16
}

// Len returns the positions sequence i reads.
func (b *Batch) Len(i int) int { return b.Seqs[i].Pos + b.Seqs[i].N }

// NewBatch returns a batch of 3 to 5 sequences of 1 to 300 positions:
// decode steps (one query token), prefill runs of up to 40 tokens at some
// depth, and prompts from position 0, with the tokens of the sequences in
// random order in Q, and gaps between them.
func NewBatch(rng *rand.Rand, sh Shape, blockSize int) *Batch {
	b := &Batch{Shape: sh, BlockSize: blockSize}
	ns := 3 + rng.IntN(3)
	kvDim := sh.KV * sh.HeadDim
	qDim := sh.Heads * sh.HeadDim
	blocks := 0
	for range ns {
		var sq backend.SeqAttn
		l := 1 + rng.IntN(300)
		switch rng.IntN(4) {
		case 0, 1: // decode
			sq.N = 1
		case 2: // prefill at depth
			sq.N = min(l, 1+rng.IntN(40))
		case 3: // prompt from position 0
			l = min(l, 40)
			sq.N = l
		}
		sq.Pos = l - sq.N
		b.Seqs = append(b.Seqs, sq)
		blocks += (l + blockSize - 1) / blockSize
	}
	blocks += 3 // unused blocks
	ids := rng.Perm(blocks)
	// Rows a position's heads together, then in the backends' layout.
	rk, rv := nans(blocks*blockSize*kvDim), nans(blocks*blockSize*kvDim)
	rkh, rvh := make([]uint16, len(rk)), make([]uint16, len(rv))
	for i := range rkh {
		rkh[i], rvh[i] = 0x7e00, 0x7e00 // NaN
	}
	for i := range b.Seqs {
		sq := &b.Seqs[i]
		l := b.Len(i)
		for range (l + blockSize - 1) / blockSize {
			sq.Table = append(sq.Table, int32(ids[0]))
			ids = ids[1:]
		}
		// Scaled so that the softmax is neither flat nor one-hot.
		k, v := randVec(rng, l*kvDim, 2), randVec(rng, l*kvDim, 1)
		kh, vh := halves(k), halves(v)
		for p := range l {
			row := int(sq.Table[p/blockSize])*blockSize + p%blockSize
			copy(rk[row*kvDim:(row+1)*kvDim], k[p*kvDim:])
			copy(rv[row*kvDim:(row+1)*kvDim], v[p*kvDim:])
			copy(rkh[row*kvDim:(row+1)*kvDim], kh[p*kvDim:])
			copy(rvh[row*kvDim:(row+1)*kvDim], vh[p*kvDim:])
		}
		b.SeqK, b.SeqV = append(b.SeqK, k), append(b.SeqV, v)
		b.SeqKH, b.SeqVH = append(b.SeqKH, kh), append(b.SeqVH, vh)
		b.SeqQ = append(b.SeqQ, randVec(rng, sq.N*qDim, 1))
	}
	b.K, b.V = HeadMajor(rk, blockSize, sh.KV, sh.HeadDim), HeadMajor(rv, blockSize, sh.KV, sh.HeadDim)
	b.KH, b.VH = HeadMajor(rkh, blockSize, sh.KV, sh.HeadDim), HeadMajor(rvh, blockSize, sh.KV, sh.HeadDim)
	for _, i := range rng.Perm(ns) {
		b.Tokens += rng.IntN(3) // a gap
		b.Seqs[i].Token = b.Tokens
		b.Tokens += b.Seqs[i].N
	}
	b.Tokens += rng.IntN(2)
	b.Q = randVec(rng, b.Tokens*qDim, 1)
	for i, sq := range b.Seqs {
		copy(b.Q[sq.Token*qDim:], b.SeqQ[i])
	}
	return b
}

// Alone returns the call of sequence i alone, its keys and values in one
// contiguous block (the layout of a cache before paging).
func (b *Batch) Alone(i int) (seqs []backend.SeqAttn, blockSize int) {
	sq := b.Seqs[i]
	return []backend.SeqAttn{{N: sq.N, Pos: sq.Pos, Table: []int32{0}}}, b.Len(i)
}

// Sentinel fills the output rows of no sequence, which attention must
// leave alone.
const Sentinel = 12345

// Run computes the batch with ops (AttentionF16 if f16) and b.Opt, into
// an output whose rows of no sequence hold Sentinel. With a window, the
// table entries of the blocks wholly before each sequence's first window
// are -1.
func (b *Batch) Run(ops backend.Ops, f16 bool) []float32 {
	out := make([]float32, len(b.Q))
	for i := range out {
		out[i] = Sentinel
	}
	seqs := b.WindowSeqs()
	if f16 {
		ops.AttentionF16(out, b.Q, b.KH, b.VH, seqs, b.BlockSize, b.Heads, b.KV, b.HeadDim, b.Opt)
	} else {
		ops.Attention(out, b.Q, b.K, b.V, seqs, b.BlockSize, b.Heads, b.KV, b.HeadDim, b.Opt)
	}
	return out
}

// WindowSeqs returns b.Seqs, with b.Opt's window their tables' entries
// for the blocks wholly before the window of each sequence's first query
// set to -1, as a cache that frees them leaves them.
func (b *Batch) WindowSeqs() []backend.SeqAttn {
	if b.Opt.Window <= 0 {
		return b.Seqs
	}
	seqs := slices.Clone(b.Seqs)
	for i := range seqs {
		sq := &seqs[i]
		sq.Table = slices.Clone(sq.Table)
		for j := range max(0, sq.Pos-b.Opt.Window+1) / b.BlockSize {
			sq.Table[j] = -1
		}
	}
	return seqs
}

// RunAlone computes sequence i alone with ops, in one contiguous block.
func (b *Batch) RunAlone(ops backend.Ops, i int, f16 bool) []float32 {
	seqs, bs := b.Alone(i)
	out := make([]float32, len(b.SeqQ[i]))
	if f16 {
		k, v := HeadMajor(b.SeqKH[i], bs, b.KV, b.HeadDim), HeadMajor(b.SeqVH[i], bs, b.KV, b.HeadDim)
		ops.AttentionF16(out, b.SeqQ[i], k, v, seqs, bs, b.Heads, b.KV, b.HeadDim, b.Opt)
	} else {
		k, v := HeadMajor(b.SeqK[i], bs, b.KV, b.HeadDim), HeadMajor(b.SeqV[i], bs, b.KV, b.HeadDim)
		ops.Attention(out, b.SeqQ[i], k, v, seqs, bs, b.Heads, b.KV, b.HeadDim, b.Opt)
	}
	return out
}

// HeadMajor returns rows, cache rows of nKV*headDim values each (a
// position's KV heads together), in the CPU backends' layout of blocks of
// blockSize rows (backend.KVIndex); len(rows) is a multiple of
// blockSize*nKV*headDim.
func HeadMajor[E float32 | uint16](rows []E, blockSize, nKV, headDim int) []E {
	out := make([]E, len(rows))
	kvDim := nKV * headDim
	for r := range len(rows) / kvDim {
		for g := range nKV {
			at := backend.KVIndex(r, g, blockSize, nKV, headDim)
			copy(out[at:at+headDim], rows[r*kvDim+g*headDim:])
		}
	}
	return out
}

// Check fails t unless out, the batch's output, holds for each sequence
// the bits of want(i), and Sentinel in the rows of no sequence.
func (b *Batch) Check(t testing.TB, what string, out []float32, want func(i int) []float32) {
	t.Helper()
	qDim := b.Heads * b.HeadDim
	used := make([]bool, b.Tokens)
	for i, sq := range b.Seqs {
		got := out[sq.Token*qDim : (sq.Token+sq.N)*qDim]
		if j := floatbits.FirstDiff(got, want(i)); j >= 0 {
			t.Fatalf("%s, %v: sequence %d (%d tokens at %d) differs at token %d value %d: %g, want %g",
				what, b, i, sq.N, sq.Pos, j/qDim, j%qDim, got[j], want(i)[j])
		}
		for tok := sq.Token; tok < sq.Token+sq.N; tok++ {
			used[tok] = true
		}
	}
	for tok, u := range used {
		if u {
			continue
		}
		for j, x := range out[tok*qDim : (tok+1)*qDim] {
			if x != Sentinel {
				t.Fatalf("%s, %v: row %d of no sequence written at %d: %g", what, b, tok, j, x)
			}
		}
	}
}

// String describes the batch's shape and sequences.
func (b *Batch) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "heads %d/%d of %d, blocks of %d, scale %v window %d sinks %v, sequences",
		b.Heads, b.KV, b.HeadDim, b.BlockSize, b.Opt.Scale, b.Opt.Window, b.Opt.Sinks != nil)
	for _, sq := range b.Seqs {
		fmt.Fprintf(&s, " [%d tokens at %d from row %d, %d blocks]", sq.N, sq.Pos, sq.Token, len(sq.Table))
	}
	return s.String()
}

// CheckPaged checks that ops computes every sequence of random batches,
// F32 and F16, for every shape and block size, without options and with
// some (RandomOpts), with the bits it gives the sequence alone in one
// contiguous block, and leaves the rows of no sequence alone.
func CheckPaged(t *testing.T, ops backend.Ops, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, sh := range Shapes {
		for k, bs := range BlockSizes {
			b := NewBatch(rng, sh, bs)
			for _, opt := range []backend.AttnOpts{{}, RandomOpts(rng, sh, k)} {
				b.Opt = opt
				for _, f16 := range []bool{false, true} {
					out := b.Run(ops, f16)
					b.Check(t, fmt.Sprintf("%s f16=%v", ops.Name(), f16), out, func(i int) []float32 { return b.RunAlone(ops, i, f16) })
				}
			}
		}
	}
}

// RandomOpts returns attention options for heads of shape sh, the k-th of
// a cycle: a window of 1 to 100 positions (shorter than some sequences of
// a NewBatch, longer than others, across chunks of 64 positions), sinks
// of random logits, a scale, and all three.
func RandomOpts(rng *rand.Rand, sh Shape, k int) backend.AttnOpts {
	var opt backend.AttnOpts
	switch k % 4 {
	case 0:
		opt.Window = 1 + rng.IntN(100)
	case 1:
		opt.Sinks = randVec(rng, sh.Heads, 2)
	case 2:
		opt.Scale = float32(0.05 + 0.2*rng.Float64())
	case 3:
		opt.Window = 1 + rng.IntN(100)
		opt.Sinks = randVec(rng, sh.Heads, 2)
		opt.Scale = float32(0.05 + 0.2*rng.Float64())
	}
	return opt
}

// Reference returns attention for sequence i of b in float64, with a
// plain softmax, over its keys and values as float32 (or as half
// precision if f16), with b.Opt: the logits scaled by Opt.Scale (or
// 1/sqrt(headDim)), the keys of each query's window only, and each
// head's sink as one more logit of the softmax, of a value of zeros.
func (b *Batch) Reference(i int, f16 bool) []float64 {
	sq := b.Seqs[i]
	k, v := b.SeqK[i], b.SeqV[i]
	if f16 {
		k, v = widen(b.SeqKH[i]), widen(b.SeqVH[i])
	}
	q := b.SeqQ[i]
	hd := b.HeadDim
	out := make([]float64, sq.N*b.Heads*hd)
	group := b.Heads / b.KV
	kvDim := b.KV * hd
	scale := 1 / math.Sqrt(float64(hd))
	if b.Opt.Scale != 0 {
		scale = float64(b.Opt.Scale)
	}
	for t := range sq.N {
		seq := sq.Pos + t + 1
		lo := 0
		if b.Opt.Window > 0 {
			lo = max(0, seq-b.Opt.Window)
		}
		for h := range b.Heads {
			qh := q[(t*b.Heads+h)*hd:][:hd]
			off := h / group * hd
			s := make([]float64, seq)
			m := math.Inf(-1)
			for j := lo; j < seq; j++ {
				var d float64
				for c, x := range qh {
					d += float64(x) * float64(k[j*kvDim+off+c])
				}
				s[j] = d * scale
				m = max(m, s[j])
			}
			var sum float64
			if b.Opt.Sinks != nil {
				m = max(m, float64(b.Opt.Sinks[h]))
				sum = math.Exp(float64(b.Opt.Sinks[h]) - m)
			}
			for j := lo; j < seq; j++ {
				s[j] = math.Exp(s[j] - m)
				sum += s[j]
			}
			o := out[(t*b.Heads+h)*hd:][:hd]
			for j := lo; j < seq; j++ {
				for c := range o {
					o[c] += s[j] / sum * float64(v[j*kvDim+off+c])
				}
			}
		}
	}
	return out
}

// CheckAccuracy checks that ops computes random batches, F32 and F16,
// without options and with each kind of RandomOpts, within tol of float64
// attention on the same values.
func CheckAccuracy(t *testing.T, ops backend.Ops, seed uint64, tol float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	for s, sh := range Shapes {
		for k, bs := range []int{16, 100} {
			b := NewBatch(rng, sh, bs)
			if k == 1 {
				b.Opt = RandomOpts(rng, sh, s)
			}
			for _, f16 := range []bool{false, true} {
				out := b.Run(ops, f16)
				qDim := b.Heads * b.HeadDim
				for i, sq := range b.Seqs {
					want := b.Reference(i, f16)
					for j, w := range want {
						g := out[sq.Token*qDim+j]
						if e := math.Abs(float64(g) - w); !(e <= tol) {
							t.Fatalf("%s f16=%v, %v: sequence %d value %d = %g, want %g", ops.Name(), f16, b, i, j, g, w)
						}
					}
				}
			}
		}
	}
}

// CheckPanics checks that ops panics, with a message, on attention calls
// that would read or write outside their slices.
func CheckPanics(t *testing.T, ops backend.Ops) {
	t.Helper()
	const heads, kv, hd, bs = 4, 2, 32, 16
	kvDim, qDim := kv*hd, heads*hd
	q := make([]float32, 3*qDim)
	out := make([]float32, 3*qDim)
	k, v := make([]float32, 4*bs*kvDim), make([]float32, 4*bs*kvDim) // 4 blocks
	kh, vh := make([]uint16, len(k)), make([]uint16, len(v))
	ok := backend.SeqAttn{Token: 0, N: 1, Pos: 20, Table: []int32{3, 0}}
	for _, c := range []struct {
		name      string
		seq       backend.SeqAttn
		blockSize int
		opt       backend.AttnOpts
	}{
		{"short table", backend.SeqAttn{Token: 1, N: 2, Pos: 31, Table: []int32{1, 2}}, bs, backend.AttnOpts{}},
		{"block past the storage", backend.SeqAttn{Token: 1, N: 1, Pos: 20, Table: []int32{1, 4}}, bs, backend.AttnOpts{}},
		{"negative block", backend.SeqAttn{Token: 1, N: 1, Pos: 3, Table: []int32{-1}}, bs, backend.AttnOpts{}},
		{"tokens past q", backend.SeqAttn{Token: 2, N: 2, Pos: 3, Table: []int32{1}}, bs, backend.AttnOpts{}},
		{"negative token", backend.SeqAttn{Token: -1, N: 1, Pos: 3, Table: []int32{1}}, bs, backend.AttnOpts{}},
		{"negative position", backend.SeqAttn{Token: 1, N: 1, Pos: -1, Table: []int32{1}}, bs, backend.AttnOpts{}},
		{"negative count", backend.SeqAttn{Token: 1, N: -1, Pos: 3, Table: []int32{1}}, bs, backend.AttnOpts{}},
		{"zero block size", backend.SeqAttn{Token: 1, N: 1, Pos: 3, Table: []int32{1}}, 0, backend.AttnOpts{}},
		{"block size past the storage", backend.SeqAttn{Token: 1, N: 1, Pos: 3, Table: []int32{1}}, 4*bs + 1, backend.AttnOpts{}},
		{"too few sinks", backend.SeqAttn{Token: 1, N: 1, Pos: 3, Table: []int32{1}}, bs, backend.AttnOpts{Sinks: make([]float32, heads-1)}},
		{"negative window", backend.SeqAttn{Token: 1, N: 1, Pos: 3, Table: []int32{1}}, bs, backend.AttnOpts{Window: -1}},
		{"negative scale", backend.SeqAttn{Token: 1, N: 1, Pos: 3, Table: []int32{1}}, bs, backend.AttnOpts{Scale: -1}},
		{"window's block past the storage", backend.SeqAttn{Token: 1, N: 1, Pos: 2*bs + 3, Table: []int32{-1, 9, 1}}, bs, backend.AttnOpts{Window: bs}},
	} {
		for _, f16 := range []bool{false, true} {
			msg := func() (msg string) {
				defer func() {
					if r := recover(); r != nil {
						msg = fmt.Sprint(r)
					}
				}()
				seqs := []backend.SeqAttn{ok, c.seq}
				if f16 {
					ops.AttentionF16(out, q, kh, vh, seqs, c.blockSize, heads, kv, hd, c.opt)
				} else {
					ops.Attention(out, q, k, v, seqs, c.blockSize, heads, kv, hd, c.opt)
				}
				return ""
			}()
			if !strings.Contains(msg, "attention") {
				t.Errorf("%s, %s f16=%v: panic %q, want one about attention", c.name, ops.Name(), f16, msg)
			}
		}
	}
	// A block need only hold the positions read, up to its last head's.
	short := k[:backend.KVIndex(bs+20, kv-1, bs, kv, hd)+hd]
	none := backend.AttnOpts{}
	ops.Attention(out, q, short, short, []backend.SeqAttn{{N: 1, Pos: 20, Table: []int32{1, 2}}}, bs, heads, kv, hd, none)
	long := make([]float32, backend.KVIndex(bs+20, kv-1, 1000, kv, hd)+hd)
	ops.Attention(out, q, long, long, []backend.SeqAttn{{N: 1, Pos: bs + 20, Table: []int32{0}}}, 1000, heads, kv, hd, none)
	ops.Attention(out, q, short, short, nil, bs, heads, kv, hd, none)
	ops.Attention(out, q, short, short, []backend.SeqAttn{{Token: 3, Pos: 1 << 20}}, bs, heads, kv, hd, none) // no tokens
	// Nor the blocks before a window: the table's entries for them are
	// not even read.
	window := backend.AttnOpts{Window: 5}
	ops.Attention(out, q, short, short, []backend.SeqAttn{{N: 1, Pos: 3*bs + 4, Table: []int32{-1, -7, 99, 0}}}, bs, heads, kv, hd, window)
}

// CheckRoPE checks that RoPE over per-token positions gives each token
// the bits of a call over consecutive positions: tokens in shuffled
// order, each token alone, and after a call of as many tokens at other
// positions (which a cache of angles must not confuse); for NeoX RoPE,
// normal RoPE with Llama 3's scaling and NeoX RoPE with YaRN's, in turn,
// on whole heads and on part of each (which a cache of frequencies must
// not confuse either); and that its values are those of a float64 rotation's within
// 1e-6 of each pair's magnitude, and the values it does not rotate
// unchanged.
func CheckRoPE(t *testing.T, ops backend.Ops, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	ropes := []arch.Rope{
		{Style: arch.RopeNeoX, Theta: 1e6},
		{Style: arch.RopeNormal, Theta: 500000, Scaling: arch.ScaleLlama3, Factor: 8, OrigContext: 64, LowFreqFactor: 1, HighFreqFactor: 4},
		{Style: arch.RopeNeoX, Theta: 150000, Scaling: arch.ScaleYaRN, Factor: 32, OrigContext: 4096, BetaFast: 32, BetaSlow: 1},
	}
	for k, hd := range []int{2, 6, 32, 128} {
		for ci, c := range []struct{ n, heads, pos int }{{1, 1, 0}, {5, 8, 1000}, {70, 8, 37}, {3, 2, 40000}, {40, 16, 0}} {
			d := c.heads * hd
			x := randVec(rng, c.n*d, 1)
			pos := make([]int32, c.n)
			for i := range pos {
				pos[i] = int32(c.pos + i)
			}
			rope := &ropes[(k+ci)%3]
			rot := hd
			if (k+ci)%2 == 1 && hd > 2 {
				rot = (hd / 2) &^ 1 // part of each head, in pairs
			}
			want := slices.Clone(x)
			ops.RoPE(want, pos, c.heads, hd, rot, rope)
			what := fmt.Sprintf("%s headDim %d (%d rotated) %+v %v RoPE %v", ops.Name(), hd, rot, c, rope.Style, rope.Scaling)
			checkRotation(t, what, want, x, pos, c.heads, hd, rot, rope)

			perm := rng.Perm(c.n)
			xs, ps := make([]float32, len(x)), make([]int32, c.n)
			for i, j := range perm {
				copy(xs[i*d:(i+1)*d], x[j*d:])
				ps[i] = pos[j]
			}
			other := slices.Clone(xs)
			op := slices.Clone(ps)
			for i := range op {
				op[i] += 7
			}
			ops.RoPE(other, op, c.heads, hd, rot, rope)
			ops.RoPE(xs, ps, c.heads, hd, rot, rope)
			for i, j := range perm {
				if k := floatbits.FirstDiff(xs[i*d:(i+1)*d], want[j*d:(j+1)*d]); k >= 0 {
					t.Fatalf("%s: shuffled token %d (position %d) differs at %d", what, j, pos[j], k)
				}
			}
			for j := range c.n {
				one := slices.Clone(x[j*d : (j+1)*d])
				ops.RoPE(one, pos[j:j+1], c.heads, hd, rot, rope)
				if k := floatbits.FirstDiff(one, want[j*d:(j+1)*d]); k >= 0 {
					t.Fatalf("%s: token %d alone differs at %d", what, j, k)
				}
			}
		}
	}
}

// checkRotation checks that got is x (len(pos) tokens of heads heads of
// hd values) with the first rot values of each head rotated as rope
// describes, within 1e-6 of each pair's magnitude of the float64
// rotation, and the others unchanged.
func checkRotation(t *testing.T, what string, got, x []float32, pos []int32, heads, hd, rot int, rope *arch.Rope) {
	t.Helper()
	freqs := rope.Freqs(rot)
	m := rope.Mscale()
	step, off := 1, rot/2
	if rope.Style == arch.RopeNormal {
		step, off = 2, 1
	}
	for tok, p := range pos {
		for h := range heads {
			o := (tok*heads + h) * hd
			for i, f := range freqs {
				s, c := math.Sincos(float64(p) * f)
				s, c = s*m, c*m
				a, b := float64(x[o+i*step]), float64(x[o+i*step+off])
				wa, wb := a*c-b*s, a*s+b*c
				tol := 1e-6 * m * (math.Abs(a) + math.Abs(b))
				if math.Abs(float64(got[o+i*step])-wa) > tol || math.Abs(float64(got[o+i*step+off])-wb) > tol {
					t.Fatalf("%s: token %d head %d pair %d: (%g, %g), want (%g, %g)", what, tok, h, i, got[o+i*step], got[o+i*step+off], wa, wb)
				}
			}
			if j := floatbits.FirstDiff(got[o+rot:o+hd], x[o+rot:o+hd]); j >= 0 {
				t.Fatalf("%s: token %d head %d: value %d, not rotated, changed", what, tok, h, rot+j)
			}
		}
	}
}

func randVec(rng *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * scale)
	}
	return v
}

func nans(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(math.NaN())
	}
	return v
}

func halves(x []float32) []uint16 {
	h := make([]uint16, len(x))
	for i, f := range x {
		h[i] = numfmt.F32ToF16(f)
	}
	return h
}

func widen(h []uint16) []float32 {
	f := make([]float32, len(h))
	for i, x := range h {
		f[i] = numfmt.F16ToF32(x)
	}
	return f
}
