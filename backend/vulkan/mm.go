package vulkan

import "inferno/gguf"

// The prompt product: mul_mm_<type> (shaders/mul_mm.comp), the
// matrix-matrix product of a weight matrix with many tokens' activations,
// the contract of mul_mv_<type> (its product, without its fused inputs).
// mul_mv reads every weight once for each 8 tokens; mul_mm decodes a tile
// of BM rows into shared memory once for BN tokens and multiplies from
// there in float32 registers. A variant on NVIDIA's cooperative matrices
// (VK_NV_cooperative_matrix) was measured slower and less accurate than
// these tiles on an H100 on 2026-12-06 (a 0.6B Q8_0 model's pp512: 7,007
// against 13,935 tok/s) and removed.

// pushMulMM is the push constant block of mul_mm_<type>
// (shaders/mul_mm.comp): y[t*LDY + r] = (Add != 0 ? y[t*LDY + r] : 0) +
// sum_c W[r][c] * x[t*Cols + c] for r < Rows, t < N, mul_mv's product
// (pushMulMV's first fields) in a block of its own, so that mul_mv's can
// grow.
type pushMulMM struct {
	W        uint64 // address of row 0 (16-byte aligned); row r at W + r*RowBytes
	X        uint64 // N*Cols float32, 16-byte aligned
	Y        uint64 // float32 outputs, token t's at Y + 4*t*LDY
	Rows     uint32
	Cols     uint32 // a multiple of weightBlock(type)
	N        uint32 // tokens
	RowBytes uint32
	LDY      uint32 // values between two tokens' outputs
	Add      uint32 // nonzero: add to y instead of storing
}

// mulMM records y = W x (add: y += W x) for n tokens with mul_mm, token
// t's outputs from y + 4*t*ldy (ldy 0: m.rows, packed).
func (p *pass) mulMM(m *matrix, x, y uint64, n int, add bool, ldy int) {
	if ldy == 0 {
		ldy = m.rows
	}
	d := p.r.d
	name, _ := mulMMShader(m.typ)
	spec := mulMMSpec(d.SubgroupSize, d.SharedMemory)
	pl := p.pipeline(name, spec[:]...)
	if pl == nil {
		return
	}
	push := pushMulMM{W: m.buf.Addr(), X: x, Y: y, Rows: uint32(m.rows), Cols: uint32(m.cols), N: uint32(n), RowBytes: uint32(m.rb), LDY: uint32(ldy)}
	if add {
		push.Add = 1
	}
	gx, gy := mulMMGroups(m.rows, n, spec)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// mulMMMinTokens is the number of tokens from which the passes take
// mul_mm instead of mul_mv. The arithmetic: up to 8 tokens mul_mv reads
// the weights once, as mul_mm does; from 9 on it reads them ceil(n/8)
// times (twice at 9) while mul_mm reads them ceil(n/BN) times (once up to
// 64 tokens on GPUs) and its extra work, the tile's unused token columns,
// is arithmetic on data already in shared memory, which on a GPU costs
// less than a second pass over the weights.
const mulMMMinTokens = 9

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
