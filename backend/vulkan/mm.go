package vulkan

import "inferno/gguf"

// The prompt product: mul_mm_<type> (shaders/mul_mm.comp), the
// matrix-matrix product of a weight matrix with many tokens' activations,
// the contract of mul_mv_<type> (its product, without its fused inputs).
// mul_mv reads every weight once for each 8 tokens; mul_mm decodes a tile
// of BM rows into shared memory once for BN tokens and multiplies from
// there in float32 registers. Where the device has cooperative matrices
// (DeviceInfo.CoopMatrix), mul_mm_cm_<type> (shaders/mul_mm_cm.comp)
// computes the same product from float16 slabs on them, the sums in
// float32, as CUDA's prompt products do on the tensor cores; float32
// weights (routers, norms' vectors) keep mul_mm. Its activations come
// from act_h (shaders/act_h.comp), as CUDA's from qact_h: float16, each
// token's scaled by a power of two that puts its largest value near 2^12,
// so that no activation overflows float16 (65,504) or sinks into its
// subnormals, and half the bytes of float32 for the slabs to read. act_h
// writes them into the runner's prepared activations (xq), once for the
// products of one input (Q, K and V of unfused weights).

// pushMulMM is the push constant block of mul_mm_<type>
// (shaders/mul_mm.comp): y[t*LDY + r] = (Add != 0 ? y[t*LDY + r] : 0) +
// sum_c W[r][c] * x[t*Cols + c] for r < Rows, t < N, mul_mv's product
// (pushMulMV's first fields) in a block of its own, so that mul_mv's can
// grow; and of mul_mm_cm_<type> (shaders/mul_mm_cm.comp), whose x is
// act_h's float16 activations and whose sums are times SX[t].
type pushMulMM struct {
	W        uint64 // address of row 0 (16-byte aligned); row r at W + r*RowBytes
	X        uint64 // N*Cols float32, 16-byte aligned (mul_mm_cm: float16, 8-byte aligned)
	Y        uint64 // float32 outputs, token t's at Y + 4*t*LDY
	Rows     uint32
	Cols     uint32 // a multiple of weightBlock(type)
	N        uint32 // tokens
	RowBytes uint32
	LDY      uint32 // values between two tokens' outputs
	Add      uint32 // nonzero: add to y instead of storing
	SX       uint64 // mul_mm_cm: N float32, token t's scale
}

// pushActH is the push constant block of act_h (shaders/act_h.comp):
// token t's Cols values at X scaled by 1/SX[t] (a power of two) to
// float16 at XH + 2*t*Cols.
type pushActH struct {
	X    uint64 // N*Cols float32, 16-byte aligned
	XH   uint64 // N*Cols float16, 8-byte aligned
	SX   uint64 // N float32
	Cols uint32 // a multiple of 4
	N    uint32
}

// halfBytes returns the bytes of act_h's activations of n tokens of cols
// values: the float16 values, then (16-byte aligned) the n scales.
func halfBytes(n, cols int) int64 {
	return halfScales(n, cols) + 4*int64(n)
}

// halfScales is the offset of the scales in act_h's activations of n
// tokens of cols values.
func halfScales(n, cols int) int64 { return (2*int64(n)*int64(cols) + 15) &^ 15 }

// actH records act_h of the n tokens of cols values at x into the
// runner's prepared activations and the barrier after it, unless they
// already hold them (the last preparation of this step was of x), and
// returns their addresses: the float16 values and the scales; ok false
// where they cannot (more tokens or values than they hold: nothing
// recorded) or act_h's pipeline could not be made (the pass's error says
// why).
func (p *pass) actH(x uint64, n, cols int) (xh, sx uint64, ok bool) {
	r := p.r
	if !r.d.CoopMatrix || n > r.qcap || cols > r.md.maxCols() || cols%4 != 0 {
		return 0, 0, false
	}
	xh = r.xq.Addr()
	sx = xh + uint64(halfScales(n, cols))
	in := quantized{x: x, mode: xPlain, n: n, cols: cols, half: true}
	if p.qvalid && p.qin == in {
		return xh, sx, true
	}
	pl := p.pipeline("act_h", rowWG(cols/4, r.d.SubgroupSize))
	if pl == nil {
		return 0, 0, false
	}
	push := pushActH{X: x, XH: xh, SX: sx, Cols: uint32(cols), N: uint32(n)}
	gx, gy := groups2D(n, 1)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
	p.rec.Barrier()
	p.qin, p.qvalid = in, true
	return xh, sx, true
}

// mulMM records y = W x (add: y += W x) for n tokens with mul_mm, token
// t's outputs from y + 4*t*ldy (ldy 0: m.rows, packed).
func (p *pass) mulMM(m *matrix, x, y uint64, n int, add bool, ldy int) {
	p.mulMMOn(m, x, y, n, add, ldy, p.r.d.CoopMatrix)
}

// mulMMOn is mulMM on cooperative matrices where coop (and m's format
// has a mul_mm_cm variant, and act_h's activations fit the runner's
// scratch), else on mul_mm's float32 tiles.
func (p *pass) mulMMOn(m *matrix, x, y uint64, n int, add bool, ldy int, coop bool) {
	if ldy == 0 {
		ldy = m.rows
	}
	d := p.r.d
	push := pushMulMM{W: m.buf.Addr(), X: x, Y: y, Rows: uint32(m.rows), Cols: uint32(m.cols), N: uint32(n), RowBytes: uint32(m.rb), LDY: uint32(ldy)}
	if add {
		push.Add = 1
	}
	if name, ok := mulMMCMShader(m.typ); ok && coop {
		if xh, sx, ok := p.actH(x, n, m.cols); ok {
			push.X, push.SX = xh, sx
			spec := mulMMCMSpec(d.SubgroupSize, d.SharedMemory, d.CoopShape)
			if pl := p.pipeline(name, spec[:]...); pl != nil {
				gx, gy := mulMMCMGroups(m.rows, n, spec)
				p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
			}
			return
		}
		if p.err != nil {
			return
		}
	}
	name, _ := mulMMShader(m.typ)
	spec := mulMMSpec(d.SubgroupSize, d.SharedMemory)
	pl := p.pipeline(name, spec[:]...)
	if pl == nil {
		return
	}
	gx, gy := mulMMGroups(m.rows, n, spec)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// mulMMMinTokens is the number of a prompt pass's tokens from which its
// dense products take mul_mm (or mul_mm_cm) instead of mul_mv's tiles of
// 8 tokens. mul_mv reads the weights ceil(n/8) times, the tiles once for
// 64 tokens; but a tile is BM rows by BN tokens, so a short prompt makes
// few workgroups (a 1024-row matrix at 64 tokens: 16), far fewer than a
// GPU's cores, while mul_mv spreads every row. Measured on an H100
// (docs/PERF.md, call L; `bench -p 9,16,32,64`, tok/s, tiles from 9
// against from 65): the 0.6B 791 / 2,375 at 9 tokens, 2,764 / 5,507 at
// 32, 5,454 / 7,518 at 64; the 8B 289 / 755 at 16, 578 / 888 at 32,
// 1,143 / 981 at 64. From 64 tokens on, then.
const mulMMMinTokens = 64

// moeMMMinTokens is mulMMMinTokens for a mixture of experts' layer: its
// experts' products (mul_mm_id) and its router (routerMV's float32
// tiles) from this many tokens of a prompt: the value mulMMMinTokens had
// before call L, not measured for the experts at short prompts.
const moeMMMinTokens = 9

// The specialization constants of mul_mm (their constant_id order).
const (
	mmLocal = iota // local_size_x
	mmBM           // rows a workgroup
	mmBN           // tokens a workgroup
	mmBK           // values of a row a step (a multiple of 16)
	mmTM           // rows an invocation
	mmTN           // tokens an invocation
)

// mulMMShader returns the name of t's matrix-matrix shader, and false if
// there is none.
func mulMMShader(t gguf.TensorType) (string, bool) {
	s, ok := weightTypes[t]
	return "mul_mm_" + s, ok
}

// mulMMSpec returns mul_mm's specialization constants for a device whose
// subgroups have subgroupSize invocations and whose workgroups may use
// sharedMemory bytes. The choice:
//   - on GPUs (subgroups of 32 or more and at least 32 KiB): 64 x 64
//     tiles, 256 invocations each computing 4 x 4 outputs in registers
//     (64 products for 8 vec4 reads of shared memory), BK = 32 (18 KiB
//     of float32 slabs);
//   - otherwise (lavapipe's 8-wide subgroups, small shared memories):
//     32 x 32 tiles, 64 invocations of 4 x 4, BK = 32 (9 KiB).
//
// BK is halved (down to 16) while the slabs would not fit sharedMemory:
// at 16 they take 5 KiB, within the 16 KiB every Vulkan device has.
func mulMMSpec(subgroupSize, sharedMemory uint32) [6]uint32 {
	s := [6]uint32{64, 32, 32, 32, 4, 4}
	if subgroupSize >= 32 && sharedMemory >= 32<<10 {
		s = [6]uint32{256, 64, 64, 32, 4, 4}
	}
	for s[mmBK] > 16 && mulMMShared(s) > int(sharedMemory) {
		s[mmBK] /= 2
	}
	return s
}

// mulMMShared is the shared memory in bytes mul_mm with specialization s
// declares: the slabs, float32 rows of BK+4 values.
func mulMMShared(s [6]uint32) int {
	bm, bn, bk := int(s[mmBM]), int(s[mmBN]), int(s[mmBK])
	return 4 * (bm + bn) * (bk + 4)
}

// mulMMGroups returns the workgroup counts (x, y) of a mul_mm dispatch of
// rows rows and n tokens with specialization spec: ceil(rows/BM) by
// ceil(n/BN), each clamped to maxGroups (the shader's workgroups stride
// over the tiles past it).
func mulMMGroups(rows, n int, spec [6]uint32) (x, y uint32) {
	return groups(rows, int(spec[mmBM])), groups(n, int(spec[mmBN]))
}

// The specialization constants of mul_mm_cm (their constant_id order).
const (
	cmLocal    = iota // local_size_x: the subgroups' invocations
	cmBM              // rows a workgroup
	cmBN              // tokens a workgroup
	cmBK              // values of a row a step (a multiple of 16)
	cmTM              // the cooperative product's M (rows)
	cmTN              // its N (tokens)
	cmTK              // its K
	cmPrefetch        // nonzero: the next slab's loads during this one's products
)

// mulMMCMShader returns the name of t's cooperative-matrix prompt
// shader, and false if there is none (float32 weights keep mul_mm: their
// products stay in float32).
func mulMMCMShader(t gguf.TensorType) (string, bool) {
	s, ok := weightTypes[t]
	if !ok || t == gguf.TensorF32 {
		return "", false
	}
	return "mul_mm_cm_" + s, true
}

// mulMMCMSpec returns mul_mm_cm's specialization constants for a device
// whose subgroups have subgroupSize invocations, whose workgroups may use
// sharedMemory bytes and whose cooperative products are shape (M, N, K):
// 64 x 64 tiles, each subgroup's part of a tile 2M x 2N (the shader's
// 2 x 2 accumulators: four subgroups for 16 x 16 products), BK = 64 (18
// KiB of float16 slabs, 4 KiB of staging), BK halved (down to 16) while
// that would not fit; the next slab read during the products of this one.
func mulMMCMSpec(subgroupSize, sharedMemory uint32, shape [3]uint32) [8]uint32 {
	s := [8]uint32{0, 64, 64, 64, shape[0], shape[1], shape[2], 1}
	for s[cmBK] > 16 && mulMMCMShared(s) > int(sharedMemory) {
		s[cmBK] /= 2
	}
	s[cmLocal] = mulMMCMSubgroups(s) * subgroupSize
	return s
}

// mulMMCMSubgroups is the number of subgroups a mul_mm_cm workgroup with
// specialization s has: one for each 2TM x 2TN part of its BM x BN tile.
func mulMMCMSubgroups(s [8]uint32) uint32 {
	return (s[cmBM] / (2 * s[cmTM])) * (s[cmBN] / (2 * s[cmTN]))
}

// mulMMCMShared is the shared memory in bytes mul_mm_cm with
// specialization s declares: the float16 slabs (rows of BK+8 values) and
// a TM x TN float32 staging area a subgroup.
func mulMMCMShared(s [8]uint32) int {
	bm, bn, bk := int(s[cmBM]), int(s[cmBN]), int(s[cmBK])
	return 2*(bm+bn)*(bk+8) + 4*int(mulMMCMSubgroups(s))*int(s[cmTM])*int(s[cmTN])
}

// mulMMCMGroups returns the workgroup counts (x, y) of a mul_mm_cm
// dispatch of rows rows and n tokens: ceil(rows/BM) by ceil(n/BN), each
// clamped to maxGroups (the workgroups stride over the tiles past it).
func mulMMCMGroups(rows, n int, spec [8]uint32) (x, y uint32) {
	return groups(rows, int(spec[cmBM])), groups(n, int(spec[cmBN]))
}
