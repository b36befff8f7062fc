package vulkan

import "inferno/gguf"

// The prompt product: mul_mm_<type> and mul_mm_coop_<type>
// (shaders/mul_mm.comp), the matrix-matrix product of a weight matrix
// with many tokens' activations, the contract of mul_mv_<type> (its
// product, without its fused inputs). mul_mv reads every weight once for each 8 tokens;
// mul_mm decodes a tile of BM rows into shared memory once for BN tokens
// and multiplies from there: in float32 registers (plain), or on
// NVIDIA's cooperative matrices (coop: each value split in two float16s,
// three products a pair of matrices summed in float32, for float32's
// accuracy).

// pushMulMM is the push constant block of mul_mm_<type> and
// mul_mm_coop_<type> (shaders/mul_mm.comp): y[t*LDY + r] = (Add != 0 ?
// y[t*LDY + r] : 0) + sum_c W[r][c] * x[t*Cols + c] for r < Rows, t < N,
// mul_mv's product (pushMulMV's first fields) in a block of its own, so
// that mul_mv's can grow.
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

// mulMM records y = W x (add: y += W x) for n tokens with mul_mm, on
// cooperative matrices where the device has them (mulMMCoop), token t's
// outputs from y + 4*t*ldy (ldy 0: m.rows, packed).
func (p *pass) mulMM(m *matrix, x, y uint64, n int, add bool, ldy int) {
	if ldy == 0 {
		ldy = m.rows
	}
	d := p.r.d
	shape, coop := mulMMCoop(&d.DeviceInfo)
	name, _ := mulMMShader(m.typ, coop)
	spec := mulMMSpec(d.SubgroupSize, d.SharedMemory, coop, shape)
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
// less than a second pass over the weights (on the cooperative matrices
// far less).
const mulMMMinTokens = 9

// The specialization constants of mul_mm (their constant_id order).
const (
	mmLocal = iota // local_size_x
	mmBM           // rows a workgroup
	mmBN           // tokens a workgroup
	mmBK           // values of a row a step (a multiple of 16)
	mmTM           // rows an invocation (plain); coop: M of the products
	mmTN           // tokens an invocation (plain); coop: N of the products
	mmCK           // coop: K of the products
)

// mmWarpTile is the rows and tokens of the tile one subgroup computes in
// mul_mm_coop (WM = WN in the shader).
const mmWarpTile = 32

// mulMMShader returns the name of t's matrix-matrix shader, the
// cooperative-matrix variant with coop, and false if there is none.
func mulMMShader(t gguf.TensorType, coop bool) (string, bool) {
	s, ok := weightTypes[t]
	if coop {
		return "mul_mm_coop_" + s, ok
	}
	return "mul_mm_" + s, ok
}

// mulMMCoop returns the shape of cooperative matrix products (M, N, K)
// mul_mm_coop computes with on the device, and whether it runs there: it
// has VK_NV_cooperative_matrix with a float16 x float16 + float32 shape
// (DeviceInfo.NVCoopMatrix; Open enables it then) and the shared memory
// for mulMMSpec's tile (20 KiB at least; NVIDIA's GPUs have 48).
func mulMMCoop(d *DeviceInfo) ([3]uint32, bool) {
	if !d.NVCoopMatrix || mulMMShared(mulMMSpec(d.SubgroupSize, d.SharedMemory, true, d.NVCoopShape), true) > int(d.SharedMemory) {
		return [3]uint32{}, false
	}
	return d.NVCoopShape, true
}

// mulMMSpec returns mul_mm's specialization constants for a device whose
// subgroups have subgroupSize invocations and whose workgroups may use
// sharedMemory bytes, for the plain variant or (coop) the cooperative
// one on products of shape (M, N, K) (mulMMCoop's). The choice:
//   - coop: a tile of 64 rows by 64 tokens, 4 subgroups each computing
//     32 x 32 (2 x 2 16x16x16 products, or 2 x 4 of 16x8x16), so that
//     each decoded weight serves 64 tokens and each activation 64 rows,
//     and a 0.6B model's 1024-row matrices still make 128 workgroups of
//     a 512-token prompt (an H100 has 132 SMs; 128-row tiles would leave
//     half of them idle); BK = 64 values a step (44 KiB of float16
//     slabs, two a matrix for the split values, and staging with 16x16
//     products);
//   - plain on GPUs (subgroups of 32 or more and at least 32 KiB): 64 x 64
//     tiles, 256 invocations each computing 4 x 4 outputs in registers
//     (64 products for 8 vec4 reads of shared memory), BK = 32 (18 KiB
//     of float32 slabs);
//   - plain otherwise (lavapipe's 8-wide subgroups, small shared
//     memories): 32 x 32 tiles, 64 invocations of 4 x 4, BK = 32 (9
//     KiB).
//
// BK is halved (down to 16) while the slabs would not fit sharedMemory:
// at 16 the plain variant's take 5 KiB, within the 16 KiB every Vulkan
// device has, coop's 20 KiB with 16x16 products (mulMMCoop says no
// below).
func mulMMSpec(subgroupSize, sharedMemory uint32, coop bool, shape [3]uint32) [7]uint32 {
	var s [7]uint32
	switch {
	case coop:
		sg := max(subgroupSize, 1)
		s = [7]uint32{0, 64, 64, 64, shape[0], shape[1], shape[2]}
		s[mmLocal] = sg * (s[mmBM] / mmWarpTile) * (s[mmBN] / mmWarpTile)
	case subgroupSize >= 32 && sharedMemory >= 32<<10:
		s = [7]uint32{256, 64, 64, 32, 4, 4, 0}
	default:
		s = [7]uint32{64, 32, 32, 32, 4, 4, 0}
	}
	for s[mmBK] > 16 && mulMMShared(s, coop) > int(sharedMemory) {
		s[mmBK] /= 2
	}
	return s
}

// mulMMShared is the shared memory in bytes mul_mm with specialization s
// declares: the slabs (float32 rows of BK+4 values; for coop, float16
// rows of BK+8, two slabs a matrix) and, for coop, two M x N float32
// staging matrices a subgroup.
func mulMMShared(s [7]uint32, coop bool) int {
	bm, bn, bk := int(s[mmBM]), int(s[mmBN]), int(s[mmBK])
	if coop {
		return 2*2*(bm+bn)*(bk+8) + 2*4*int(s[mmTM]*s[mmTN])*(bm/mmWarpTile)*(bn/mmWarpTile)
	}
	return 4 * (bm + bn) * (bk + 4)
}

// mulMMGroups returns the workgroup counts (x, y) of a mul_mm dispatch of
// rows rows and n tokens with specialization spec: ceil(rows/BM) by
// ceil(n/BN), each clamped to maxGroups (the shader's workgroups stride
// over the tiles past it).
func mulMMGroups(rows, n int, spec [7]uint32) (x, y uint32) {
	return groups(rows, int(spec[mmBM])), groups(n, int(spec[mmBN]))
}
