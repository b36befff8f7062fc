package vulkan

import (
	"fmt"

	"inferno/gguf"
)

// The decode products on 8-bit integer dot products
// (VK_KHR_shader_integer_dot_product): quant_act (shaders/quant_act.comp)
// quantizes a product's input to 16-bit integers held as two planes of
// signed bytes, in chunks of 16 values each with a float32 scale and sum,
// into the runner's scratch, computing the input as it goes (RMSNorm
// times the gain, or the SwiGLU of the gate-and-up rows: mul_mv's input
// modes); mul_mvq_<type> (shaders/mul_mvq.comp over quant8.glsl)
// multiplies the weights' blocks, read as signed bytes, with both planes
// in dotPacked4x8EXT (dp4a where the device has it). The weights are read
// as mul_mv reads them; the activations are half the bytes of float32
// and the weights are never converted to float, which is what a K-quant's
// float decoding costs mul_mv. 8-bit activations (one plane, as llama.cpp's
// q8_1, in chunks of 16) would halve the dot products but put a model's
// logits 4e-3 to 2e-2 relative L2 from the reference (measured on
// lavapipe: tiny-q8_0's goldens, the Q4_K_M and Q6_K models of
// TestArchitectures against the CPU), over the 2e-3 the tests hold every
// path to; with two planes they stay where mul_mv's are (3e-4 to 6e-4 of
// the goldens, 1e-4 of the CPU).
//
// For a few tokens and a small product (mulMVQFused: a 0.6B's layers at
// one token) mul_mvq quantizes its float input itself, each workgroup the
// whole input, to the same integers as quant_act's: one dispatch and
// barrier a product instead of two.
//
// Used where mul_mv would run (passes of up to 8 tokens, and decode
// batches) for the types of intDotTypes, on devices whose driver says
// that 4x8-bit packed signed dot products are accelerated
// (DeviceInfo.IntegerDotFast; useIntDot), or wherever the device has
// them when Options.IntDot asks for it (the tests, on lavapipe).

// IntDot says when the decode products take integer activations and dot
// products (Options).
type IntDot int

const (
	// IntDotAuto: where the device's 4x8-bit dot products are
	// accelerated (DeviceInfo.IntegerDotFast).
	IntDotAuto IntDot = iota
	// IntDotOn: wherever the device has them (DeviceInfo.IntegerDot).
	IntDotOn
	// IntDotOff: never; the products decode the weights to float.
	IntDotOff
)

// pushQuantAct is the push constant block of quant_act
// (shaders/quant_act.comp): token t's Cols input values quantized into
// XQ + 2*t*Cols (each chunk of 16 values its 16 high bytes, then its 16
// low ones) and XM + 8*t*Cols/16 ((scale, sum) float32 pairs a chunk).
type pushQuantAct struct {
	X       uint64 // float32 activations, 16-byte aligned
	Gain    uint64 // xNorm: Cols float32 gains
	XQ      uint64 // 2*N*Cols bytes, 16-byte aligned
	XM      uint64 // N*Cols/16 pairs of float32, 8-byte aligned
	Cols    uint32 // a multiple of 32
	N       uint32 // tokens
	Eps     float32
	XStride uint32 // xSwiGLU: values from a token's gate-and-up row to the next's
}

// pushMulMVQ is the push constant block of mul_mvq_<type>
// (shaders/mul_mvq.comp): y[t*LDY + r] = (Add != 0 ? y[t*LDY + r] : 0) +
// sum_c W[r][c] * x[t*Cols + c] for r < Rows, t < N, x as quant_act
// quantized it into XQ and XM, or (specialization FUSED) as the shader
// quantizes its input at X itself.
type pushMulMVQ struct {
	W        uint64 // address of row 0 (16-byte aligned); row r at W + r*RowBytes
	XQ       uint64
	XM       uint64
	Y        uint64 // float32 outputs, token t's at Y + 4*t*LDY
	Rows     uint32
	Cols     uint32 // a multiple of the type's block
	N        uint32
	RowBytes uint32
	LDY      uint32
	Add      uint32
	X        uint64 // FUSED: the float32 input, 16-byte aligned
	Gain     uint64 // FUSED, xNorm: Cols float32 gains
	Eps      float32
	XStride  uint32 // FUSED, xSwiGLU: values from a token's gate-and-up row to the next's
}

// intDotTypes are the weight formats mul_mvq has a variant for.
var intDotTypes = map[gguf.TensorType]bool{
	gguf.TensorQ8_0: true, gguf.TensorQ4_0: true, gguf.TensorQ4_1: true, gguf.TensorQ5_0: true, gguf.TensorQ5_1: true,
	gguf.TensorQ2_K: true, gguf.TensorQ3_K: true, gguf.TensorQ4_K: true, gguf.TensorQ5_K: true, gguf.TensorQ6_K: true,
	gguf.TensorIQ4_NL: true, gguf.TensorIQ4_XS: true, gguf.TensorMXFP4: true,
}

// mulMVQShader returns the name of t's integer dot product shader, and
// false if there is none.
func mulMVQShader(t gguf.TensorType) (string, bool) {
	if !intDotTypes[t] {
		return "", false
	}
	return "mul_mvq_" + weightTypes[t], true
}

// useIntDot reports whether a model on a device of info takes the
// integer dot products, as mode asks: by default wherever the driver says
// they are accelerated, for every format they have, Q8_0's included, so
// that a sequence's products take the same arithmetic alone and batched
// (their sums' order aside): float products alone and integer ones in a
// batch would put its logits 1e-4 apart, enough to change a seeded draw
// now and then. Measured on an
// H100 (2026-12-07, 0.6B Q8_0): batched, S_TG at 8 and 64 sequences 2,212
// and 6,310 tok/s against mul_mv's 1,703 and 3,453 (each weight read once
// for 8 tokens either way: mul_mv's float work bounds it); at one token
// tg128 544-556 against 569-578 while every product had its quantizing
// dispatch (4.5 us a product, more than mul_mvq's 8.1 us saved on
// mul_mv's 10.8), 598-599 since small products quantize their own
// input (mulMVQFused). The 8B's Q4_K and Q6_K layers are 5.7 times faster
// a step on them (BenchmarkDecodeIntDot).
func useIntDot(info *DeviceInfo, mode IntDot) bool {
	switch mode {
	case IntDotOn:
		return info.IntegerDot
	case IntDotOff:
		return false
	}
	return info.IntegerDotFast
}

// mulMVQSpec returns the specialization constants of mul_mvq_<type> for
// a product of rows rows of cols values and n tokens: mul_mv's
// (mulMVSpecRows), with the local size halved (down to a subgroup) while
// it is twice a row's units of 32 values or more, which would leave half
// the invocations idle (1024-wide rows have 32 units where mul_mv's 64
// invocations take 64 of 16 values). Not measured yet on a device with
// accelerated dot products: BenchmarkMulMVQ's L/R choices are the
// measurement to make.
func mulMVQSpec(subgroupSize uint32, rows, cols, n int) [3]uint32 {
	s := mulMVSpecRows(subgroupSize, rows, n)
	units := uint32(cols / 32)
	for s[0] >= 2*units && s[0]/2 >= max(subgroupSize, 1) {
		s[0] /= 2
	}
	return s
}

// fusedReadLimit bounds the input bytes the workgroups of a product that
// quantizes its own input (mulMVQFused) read together: each reads every
// token's whole input (twice the values for the SwiGLU's gate and up, and
// the RMSNorm's gains once), so the reads grow with the row tiles.
// Measured on an H100 (2026-12-07, docs/PERF.md, calls F and G): a 0.6B
// whose products (4 to 12 MiB of such reads) quantize their own inputs
// decodes 5.6% faster (a step at position 64 1,748 us against 1,982:
// mul_mvq 10.4 us a product against 8.0 plus quant_act's 4.5); an 8B
// whose K, V and attention-output products (16 MiB each) did decoded 6%
// slower (K and V re-quantized what quant_act had already done for Q).
const fusedReadLimit = 12 << 20

// mulMVQFused reports whether mul_mvq quantizes its input itself (its
// FUSED specialization) for a product of rows rows of cols values, n
// tokens in input mode mode and specialization spec (mulMVQSpec): where
// the n tokens are one tile and the workgroups' reads of them stay within
// fusedReadLimit; else quant_act quantizes the input once for all.
func mulMVQFused(spec [3]uint32, rows, cols, n int, mode uint32) bool {
	if n > int(spec[2]) {
		return false
	}
	in := 4 * int64(cols) * int64(n)
	switch mode {
	case xNorm:
		in += 4 * int64(cols) // the gains
	case xSwiGLU:
		in *= 2 // gate and up
	}
	gx, _ := mulMVGroups(rows, n, spec)
	return int64(gx)*in <= fusedReadLimit
}

// quantActSpec returns the local size of quant_act: 64 invocations (a
// chunk of 16 values each), or the subgroup when it is wider.
func quantActSpec(subgroupSize uint32) uint32 { return max(64, subgroupSize) }

// quantActGroups returns the workgroup counts (x, y) of a quant_act
// dispatch of n tokens of cols values with local size local (y clamped
// to maxGroups: the workgroups then stride over the tokens).
func quantActGroups(cols, n int, local uint32) (x, y uint32) {
	return groups(cols/16, int(local)), uint32(max(1, min(n, maxGroups)))
}

// quantBytes returns the bytes of n tokens of cols values quantized by
// quant_act: the values' two planes of bytes, then the (scale, sum)
// pairs.
func quantBytes(n, cols int) (values, meta int64) {
	return 2 * int64(n) * int64(cols), 8 * int64(n) * int64(cols/16)
}

// maxCols is the longest row of the model's products (their inputs'
// width).
func (md *Model) maxCols() int {
	c := md.c
	return max(c.Hidden, c.QDim(), c.FFN)
}

// actBytes is the device memory of the products' prepared activations
// for n tokens of the widest product input: quant_act's with the integer
// dot products, act_h's on cooperative matrices (the larger of the two
// with both), none without either.
func (md *Model) actBytes(n int) int64 {
	var b int64
	if md.intDot {
		v, m := quantBytes(n, md.maxCols())
		b = v + m
	}
	if md.d.CoopMatrix {
		b = max(b, halfBytes(n, md.maxCols()))
	}
	return b
}

// growActs makes the runner's prepared activations (xq) hold n tokens
// (nothing where the model's products take none: actBytes).
func (r *BatchRunner) growActs(n int) error {
	need := r.md.actBytes(n)
	if need == 0 || n <= r.qcap {
		return nil
	}
	b, err := r.d.NewBuffer(need)
	if err != nil {
		return fmt.Errorf("vulkan: prepared activations of %d tokens: %w", n, err)
	}
	r.xq.Free()
	r.xq, r.qcap = b, n
	r.resetGraphs()
	return nil
}

// A quantized is what the runner's prepared activations hold: the input
// x of n tokens of cols values in input mode mode (gain: the norm's),
// quantized by quant_act, or with half by act_h.
type quantized struct {
	x       uint64
	mode    uint32
	gain    *vector
	n, cols int
	half    bool
}

// mulMVQ records mulMVIn's product on the integer dot products and
// reports whether it could: false (nothing recorded) for a type without a
// mul_mvq variant or a model without them. The product quantizes its
// input itself where mulMVQFused says so; otherwise quant_act quantizes it
// first into the runner's scratch (unless the last quantization of this
// step was of the same input).
func (p *pass) mulMVQ(m *matrix, mode uint32, x uint64, gain *vector, y uint64, n int, add bool, ldy int) bool {
	r := p.r
	name, ok := mulMVQShader(m.typ)
	if !ok || !r.md.intDot || n > r.qcap || m.cols > r.md.maxCols() {
		return false
	}
	spec := mulMVQSpec(r.d.SubgroupSize, m.rows, m.cols, n)
	push := pushMulMVQ{W: m.buf.Addr(), Y: y, Rows: uint32(m.rows), Cols: uint32(m.cols), N: uint32(n),
		RowBytes: uint32(m.rb), LDY: uint32(ldy)}
	if add {
		push.Add = 1
	}
	in := quantized{x: x, mode: mode, gain: gain, n: n, cols: m.cols}
	// An input quant_act has already quantized this step (Q's for K and
	// V of other types) is read as it is.
	fused := !(p.qvalid && p.qin == in) && mulMVQFused(spec, m.rows, m.cols, n, mode)
	if fused {
		push.X, push.Gain = x, x // Gain read only with xNorm
		switch mode {
		case xNorm:
			push.Gain, push.Eps = gain.buf.Addr(), p.c.Eps
		case xSwiGLU:
			push.XStride = uint32(2 * m.cols)
		}
	} else {
		vbytes, _ := quantBytes(n, m.cols)
		push.XQ = r.xq.Addr()
		push.XM = push.XQ + uint64(vbytes)
		if !p.quantAct(in, push.XQ, push.XM) {
			return true
		}
	}
	var f, xmode uint32 // FUSED and XMODE: 0 and 0 (one pipeline) on quant_act's
	if fused {
		f, xmode = 1, mode
	}
	pl := p.pipeline(name, spec[0], spec[1], spec[2], f, xmode)
	if pl == nil {
		return true
	}
	gx, gy := mulMVGroups(m.rows, n, spec)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
	return true
}

// quantAct records quant_act of in into xq and xm, and the barrier after
// it, unless the last quantization of this step was of the same input;
// false if its pipeline could not be made (the pass's error says why).
func (p *pass) quantAct(in quantized, xq, xm uint64) bool {
	if p.qvalid && p.qin == in {
		return true
	}
	local := quantActSpec(p.r.d.SubgroupSize)
	pq := p.pipeline("quant_act", local, in.mode)
	if pq == nil {
		return false
	}
	push := pushQuantAct{X: in.x, XQ: xq, XM: xm, Cols: uint32(in.cols), N: uint32(in.n)}
	push.Gain = in.x // read only with xNorm
	switch in.mode {
	case xNorm:
		push.Gain, push.Eps = in.gain.buf.Addr(), p.c.Eps
	case xSwiGLU:
		push.XStride = uint32(2 * in.cols)
	}
	gx, gy := quantActGroups(in.cols, in.n, local)
	p.rec.Dispatch(pq, gx, gy, 1, PushBytes(&push))
	p.rec.Barrier()
	p.qin, p.qvalid = in, true
	return true
}
