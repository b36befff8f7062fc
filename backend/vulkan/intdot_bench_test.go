package vulkan

import (
	"fmt"
	"testing"

	"inferno/batch"
	"inferno/gguf"
	"inferno/synth"
)

// BenchmarkMulMVQ times mul_mvq against mul_mv on the same weights, as
// BenchmarkMulMVSpec does (50 dispatches a command buffer, bytes the
// weights'), for the shapes of the issue: per case
//
//	mv            mul_mv of one token, its default choice (mulMVSpecRows)
//	mvq           mul_mvq of one token, its default choice (mulMVQSpec)
//	quant+mvq     quant_act then mul_mvq, a barrier between: what a decode
//	              product costs the runner where mul_mvq does not
//	              quantize its own input (the input read plain)
//	fused         mul_mvq quantizing its float input itself (FUSED): what
//	              it costs where mulMVQFused chooses it
//	mv/n8, mvq/n8 both of 8 tokens (the quantization of 8 tokens outside)
//	mvq/L<l>/R<r> mul_mvq of one token with local size l and r rows a
//	              workgroup (the choice to tune)
//
// Run on a device with the integer dot products (skipped otherwise).
func BenchmarkMulMVQ(b *testing.B) {
	d := intDotDevice(b)
	const batch = 50
	for _, c := range []struct {
		typ        gguf.TensorType
		rows, cols int
	}{
		{gguf.TensorQ8_0, 4096, 1024}, {gguf.TensorQ4_K, 12288, 4096}, {gguf.TensorQ4_K, 4096, 4096},
		{gguf.TensorQ6_K, 4096, 12288}, {gguf.TensorQ5_K, 4096, 4096}, {gguf.TensorQ4_0, 4096, 4096},
	} {
		w, rb, size := benchWeights(b, d, c.typ, c.rows, c.cols)
		x, _ := d.NewBuffer(8 * int64(c.cols) * 4)
		vb, mb := quantBytes(8, c.cols)
		xq, _ := d.NewBuffer(vb + mb)
		y, err := d.NewBuffer(8 * int64(c.rows) * 4)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Fill(x, 0, x.Size(), 0x3f000000); err != nil { // 0.5
			b.Fatal(err)
		}
		if err := d.Fill(xq, 0, xq.Size(), 0x01010101); err != nil {
			b.Fatal(err)
		}
		vname, _ := mulMVShader(c.typ)
		qname, _ := mulMVQShader(c.typ)
		// run times a command buffer of batch times the dispatches of
		// record.
		run := func(b *testing.B, record func(r *Recorder)) {
			b.SetBytes(int64(size) * batch)
			benchBatches(b, d, batch, record)
		}
		mv := func(spec [3]uint32, n int) func(b *testing.B) {
			return func(b *testing.B) {
				p, err := d.Pipeline(vname, spec[:]...)
				if err != nil {
					b.Fatal(err)
				}
				push := pushMulMV{W: w.Addr(), X: x.Addr(), Y: y.Addr(), Rows: uint32(c.rows), Cols: uint32(c.cols), N: uint32(n), RowBytes: uint32(rb), LDY: uint32(c.rows)}
				gx, gy := mulMVGroups(c.rows, n, spec)
				run(b, func(r *Recorder) {
					r.Dispatch(p, gx, gy, 1, PushBytes(&push))
					r.Barrier()
				})
			}
		}
		mvq := func(spec [3]uint32, n int, quant, fused bool) func(b *testing.B) {
			return func(b *testing.B) {
				var f uint32
				if fused {
					f = 1
				}
				p, err := d.Pipeline(qname, spec[0], spec[1], spec[2], f, xPlain)
				if err != nil {
					b.Fatal(err)
				}
				qv, _ := quantBytes(n, c.cols) // where the (scale, sum) pairs start
				local := quantActSpec(d.SubgroupSize)
				pq, err := d.Pipeline("quant_act", local, xPlain)
				if err != nil {
					b.Fatal(err)
				}
				qpush := pushQuantAct{X: x.Addr(), Gain: x.Addr(), XQ: xq.Addr(), XM: xq.Addr() + uint64(qv), Cols: uint32(c.cols), N: uint32(n)}
				qx, qy := quantActGroups(c.cols, n, local)
				push := pushMulMVQ{W: w.Addr(), XQ: xq.Addr(), XM: xq.Addr() + uint64(qv), Y: y.Addr(), Rows: uint32(c.rows), Cols: uint32(c.cols), N: uint32(n),
					RowBytes: uint32(rb), LDY: uint32(c.rows)}
				if fused {
					push.XQ, push.XM, push.X, push.Gain = 0, 0, x.Addr(), x.Addr()
				}
				gx, gy := mulMVGroups(c.rows, n, spec)
				run(b, func(r *Recorder) {
					if quant {
						r.Dispatch(pq, qx, qy, 1, PushBytes(&qpush))
						r.Barrier()
					}
					r.Dispatch(p, gx, gy, 1, PushBytes(&push))
					r.Barrier()
				})
			}
		}
		name := fmt.Sprintf("%s/%dx%d", c.typ, c.rows, c.cols)
		b.Run(name+"/mv", mv(mulMVSpecRows(d.SubgroupSize, c.rows, 1), 1))
		b.Run(name+"/mvq", mvq(mulMVQSpec(d.SubgroupSize, c.rows, c.cols, 1), 1, false, false))
		b.Run(name+"/quant+mvq", mvq(mulMVQSpec(d.SubgroupSize, c.rows, c.cols, 1), 1, true, false))
		b.Run(name+"/fused", mvq(mulMVQSpec(d.SubgroupSize, c.rows, c.cols, 1), 1, false, true))
		b.Run(name+"/mv/n8", mv(mulMVSpecRows(d.SubgroupSize, c.rows, 8), 8))
		b.Run(name+"/mvq/n8", mvq(mulMVQSpec(d.SubgroupSize, c.rows, c.cols, 8), 8, false, false))
		for _, local := range []uint32{d.SubgroupSize, 2 * d.SubgroupSize, 4 * d.SubgroupSize} {
			for _, rows := range []uint32{1, 2, 4, 8} {
				b.Run(fmt.Sprintf("%s/mvq/L%d/R%d", name, local, rows), mvq([3]uint32{local, rows, 1}, 1, false, false))
			}
		}
		w.Free()
		x.Free()
		xq.Free()
		y.Free()
	}
}

// BenchmarkDecodeIntDot times decode steps of B = 1 and 8 sequences of
// models of real widths and few layers (synth, a small vocabulary) with
// the float products (mul_mv, IntDot off) and the integer ones (mul_mvq,
// on): a step's whole command buffer, dispatches and barriers included
// (quant_act's among them), so the difference between the two over the
// layers is what the integer dot products save a layer of the full
// model. Qwen3-0.6B's widths in Q8_0 (4 layers) and Qwen3-8B's in Q4_K_M
// (2 layers; synth takes seconds to quantize them).
func BenchmarkDecodeIntDot(b *testing.B) {
	d := testDevice(b)
	for _, c := range []archCase{
		{"0.6b-q8_0", "0.6b", "Q8_0", synth.Shape{Layers: 4, Vocab: 4096}},
		{"8b-q4_k_m", "8b", "Q4_K_M", synth.Shape{Layers: 2, Vocab: 4096}},
	} {
		b.Run(c.name, func(b *testing.B) { benchDecode(b, d, c) })
	}
}

// benchDecode is BenchmarkDecodeIntDot of case c.
func benchDecode(b *testing.B, d *Device, c archCase) {
	m := archModel(b, c)
	for _, mode := range []IntDot{IntDotOff, IntDotOn} {
		if mode == IntDotOn && !d.IntegerDot {
			continue
		}
		md := loadModel(b, m, Options{MaxLen: 64, Device: -1, IntDot: mode})
		for _, B := range []int{1, 8} {
			b.Run(fmt.Sprintf("intdot=%v/B=%d", mode == IntDotOn, B), func(b *testing.B) {
				br, err := md.NewBatchRunner(4*B, 16)
				if err != nil {
					b.Fatal(err)
				}
				defer br.Close()
				var bt batch.Batch
				for s := range B {
					bt.Add(bt.AddSeq([]int32{int32(4 * s)}), []int32{1, 2, 3, 4}, 0, true)
				}
				if err := br.Forward(&bt); err != nil {
					b.Fatal(err)
				}
				bt.Reset()
				for s := range B {
					bt.Add(bt.AddSeq([]int32{int32(4 * s)}), []int32{5}, 4, true)
				}
				for b.Loop() {
					if err := br.Forward(&bt); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
