package vulkan

import (
	"fmt"

	"inferno/gguf"
)

// The weight-format shaders: mul_mv_<type> (shaders/mul_mv.comp), the
// matrix-vector product of a weight matrix with 1..8 tokens' activations,
// and get_rows_<type> (shaders/get_rows.comp), the embedding lookup, one
// variant a GGUF type, decoding the blocks as shaders/quant.glsl does.

// pushMulMV is the push constant block of mul_mv_<type>
// (shaders/mul_mv.comp): y[t*LDY + r] = (Add != 0 ? y[t*LDY + r] : 0) +
// sum_c W[r][c] * x[t*Cols + c] for r < Rows, t < N.
//
// W is 16-byte aligned (GGUF aligns tensors to 32 bytes), as are X and,
// in pushGetRows, Out.
type pushMulMV struct {
	W        uint64 // address of row 0; row r at W + r*RowBytes
	X        uint64 // N*Cols float32, 16-byte aligned
	Y        uint64 // float32 outputs, token t's at Y + 4*t*LDY
	Gain     uint64 // xNorm: Cols float32 gains
	Rows     uint32
	Cols     uint32 // a multiple of weightBlock(type)
	N        uint32 // tokens
	RowBytes uint32
	LDY      uint32 // values between two tokens' outputs
	Add      uint32 // nonzero: add to y instead of storing
	Eps      float32
	XStride  uint32 // xSwiGLU: values from a token's gate-and-up row to the next's
}

// The inputs mul_mv computes from x as it reads it (its specialization
// constant 3, XMODE): x itself, RMSNorm(x) * gain, or the SwiGLU of a
// packed gate-and-up row.
const (
	xPlain  = 0
	xNorm   = 1
	xSwiGLU = 2
)

// pushGetRows is the push constant block of get_rows_<type>
// (shaders/get_rows.comp): out[i*Cols + c] = W[ids[i]][c] for i < N.
// The shader does not check the ids: the caller keeps them below the
// matrix's rows (a read past the buffer may lose the device).
type pushGetRows struct {
	W        uint64 // address of row 0; row r at W + r*RowBytes
	IDs      uint64 // N int32 row numbers, each below the matrix's rows
	Out      uint64 // N*Cols float32, 16-byte aligned
	Cols     uint32 // a multiple of weightBlock(type)
	RowBytes uint32
	N        uint32
	Scale    float32 // 0: none; else the values are multiplied by it (a scaled embedding)
}

// weightTypes names the shader variant of each weight format: mul_mv_ and
// get_rows_ followed by the name.
var weightTypes = map[gguf.TensorType]string{
	gguf.TensorF32:    "f32",
	gguf.TensorF16:    "f16",
	gguf.TensorBF16:   "bf16",
	gguf.TensorQ8_0:   "q8_0",
	gguf.TensorQ4_0:   "q4_0",
	gguf.TensorQ4_1:   "q4_1",
	gguf.TensorQ5_0:   "q5_0",
	gguf.TensorQ5_1:   "q5_1",
	gguf.TensorQ2_K:   "q2_k",
	gguf.TensorQ3_K:   "q3_k",
	gguf.TensorQ4_K:   "q4_k",
	gguf.TensorQ5_K:   "q5_k",
	gguf.TensorQ6_K:   "q6_k",
	gguf.TensorIQ4_NL: "iq4_nl",
	gguf.TensorIQ4_XS: "iq4_xs",
	gguf.TensorMXFP4:  "mxfp4",
}

// mulMVShader returns the name of t's matrix-vector shader, and false if
// there is none.
func mulMVShader(t gguf.TensorType) (string, bool) {
	s, ok := weightTypes[t]
	return "mul_mv_" + s, ok
}

// getRowsShader returns the name of t's row lookup shader, and false if
// there is none.
func getRowsShader(t gguf.TensorType) (string, bool) {
	s, ok := weightTypes[t]
	return "get_rows_" + s, ok
}

// weightBlock is the number of values the shaders decode t in, which
// every row's length must be a multiple of: t's block size, and 16 for
// the float types (decoded 16 values at a time, as the blocks of the
// others).
func weightBlock(t gguf.TensorType) int {
	switch t {
	case gguf.TensorF32, gguf.TensorF16, gguf.TensorBF16:
		return 16
	}
	return t.BlockSize()
}

// checkWeightRows reports whether the shaders can compute on rows of cols
// values of type t, saying why not.
func checkWeightRows(t gguf.TensorType, cols int) error {
	if _, ok := weightTypes[t]; !ok {
		return fmt.Errorf("vulkan: no shader for weights of type %s", t)
	}
	if b := weightBlock(t); cols <= 0 || cols%b != 0 {
		return fmt.Errorf("vulkan: rows of %d %s values: need a positive multiple of %d", cols, t, b)
	}
	return nil
}

// mulMVSpec returns the specialization constants of mul_mv_<type> for a
// product of n tokens on a device whose subgroups have subgroupSize
// invocations: local size, rows and tokens per workgroup. The choice:
//   - local size twice the subgroup size below 64 (64 on NVIDIA's and
//     Apple's 32-wide subgroups, enough weight loads in flight a row tile
//     at two subgroups' reduction), the subgroup size from 64 on (AMD's
//     wave64); 64 when the size is unknown (0);
//   - 2 rows a workgroup: each activation read serves two rows;
//   - tokens: n rounded up to a power of two, at most 8, so that the
//     weights are read once for the n <= 8 tokens of a decode step (more
//     tokens take ceil(n/8) passes).
func mulMVSpec(subgroupSize uint32, n int) [3]uint32 {
	local := uint32(64)
	switch {
	case subgroupSize >= 64:
		local = subgroupSize
	case subgroupSize > 0:
		local = 2 * subgroupSize
	}
	tokens := uint32(1)
	for int(tokens) < n && tokens < 8 {
		tokens *= 2
	}
	return [3]uint32{local, 2, tokens}
}

// mulMVSpecRows is mulMVSpec for a product of rows rows: on devices of
// 32-wide subgroups or wider, 4 rows a workgroup from 2,048 rows on, and
// for one token a 32,768-row or larger matrix (an output head) one
// subgroup a workgroup of 2 rows. Measured on an H100
// (BenchmarkMulMVSpec, 2026-12-06, Q8_0): one token, 4096 and 6144 rows
// of 1024 574 and 753 GB/s against 568 and 630 with 2 rows; tiles of 8
// tokens 838 and 1,419 us for 50 products against 944 and 1,501 with 2
// rows (8 and 16 rows slower); 151,936 rows 1.87 TB/s against 1.63 with
// two subgroups.
func mulMVSpecRows(subgroupSize uint32, rows, n int) [3]uint32 {
	s := mulMVSpec(subgroupSize, n)
	if subgroupSize >= 32 {
		switch {
		case rows >= 32768 && n == 1:
			s[0], s[1] = subgroupSize, 2
		case rows >= 2048:
			s[1] = 4
		}
	}
	return s
}

// mulMVGroups returns the workgroup counts (x, y) of a mul_mv dispatch of
// rows rows and n tokens with specialization spec (mulMVSpec's):
// ceil(rows/spec[1]) by ceil(n/spec[2]), each clamped to maxGroups (the
// shader's workgroups stride over the work past it).
func mulMVGroups(rows, n int, spec [3]uint32) (x, y uint32) {
	return groups(rows, int(spec[1])), groups(n, int(spec[2]))
}

// getRowsSpec returns the local size of get_rows_<type> (its
// specialization constant 0): 64 invocations, each decoding 16 values of
// a row.
func getRowsSpec(subgroupSize uint32) uint32 { return max(64, subgroupSize) }

// getRowsGroups returns the workgroup counts (x, y) of a get_rows
// dispatch of n rows of cols values with local size local:
// ceil(cols/16/local) by n, clamped to maxGroups.
func getRowsGroups(cols, n int, local uint32) (x, y uint32) {
	return groups(cols/16, int(local)), min(uint32(max(n, 0)), maxGroups)
}

// groups is ceil(n/per), at least 1 and at most maxGroups.
func groups(n, per int) uint32 {
	g := (n + per - 1) / per
	return uint32(max(1, min(g, maxGroups)))
}
