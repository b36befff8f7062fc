package vulkan

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"inferno/arch"
	"inferno/gguf"
)

// BenchmarkMoELayer times a mixture-of-experts layer's dispatches (pass's
// moe: the router, the routing, the experts' products, the sum into x) on
// the shapes of gpt-oss-20b (32 experts of 2880 x 2880 MXFP4, 4 a token,
// with biases) and Qwen3-30B-A3B (128 experts, gate and up 768 x 2048
// Q4_K, down 2048 x 768 Q6_K, 8 a token), for decode steps of 1 and 8
// sequences (the pass's path: a pair a workgroup, moePairs) and 64 (the
// pairs grouped by expert in tiles of 8, moeGrouped's mul_mv_idg), each
// of 8 and 64 also along the other path (/tiles, /pairs), 64 tokens as a
// prompt (grouped in mul_mm's tiles, mul_mm_id) and a 512-token prompt:
// the timings to choose the paths' thresholds by: 20 layers recorded
// in one command buffer, replayed (on a CPU device, lavapipe: one layer,
// decode of 1 and 8 only). It reports microseconds a layer and, for decode, the
// GB/s of the chosen experts' bytes (each chosen expert's three matrices
// once, as the routing of the first replay chose them).
func BenchmarkMoELayer(b *testing.B) {
	d := testDevice(b)
	type moeShape struct {
		name               string
		hidden, ffn, e, k  int
		gateType, downType gguf.TensorType
		bias               bool
		act                arch.Activation
		gating             arch.Gating
	}
	for _, s := range []moeShape{
		{"gpt-oss-20b", 2880, 2880, 32, 4, gguf.TensorMXFP4, gguf.TensorMXFP4, true, arch.SwiGLUOAI, arch.GateSoftmaxTopK},
		{"qwen3-30b-a3b", 2048, 768, 128, 8, gguf.TensorQ4_K, gguf.TensorQ6_K, false, arch.SwiGLU, arch.GateSoftmax},
	} {
		c := &arch.Config{Hidden: s.hidden, Eps: 1e-6, Act: s.act,
			MoE: arch.MoE{Experts: s.e, TopK: s.k, ExpertFFN: s.ffn, NormTopK: !s.bias, Gating: s.gating, Bias: s.bias}}
		rng := rand.New(rand.NewPCG(1, 2))
		var bufs []*Buffer
		newBuf := func(data []byte) *Buffer {
			buf, err := d.NewBuffer(int64(len(data)))
			if err != nil {
				b.Fatal(err)
			}
			if err := d.Write(buf, 0, data); err != nil {
				b.Fatal(err)
			}
			bufs = append(bufs, buf)
			return buf
		}
		stack := func(t gguf.TensorType, rows, cols int) *matrix {
			rb, _ := t.RowBytes(uint64(cols))
			data := make([]byte, s.e*rows*int(rb))
			for i := range data {
				data[i] = byte(rng.Uint32() & 0x3b) // finite scales, small values
			}
			return &matrix{buf: newBuf(data), typ: t, rows: s.e * rows, cols: cols, rb: int(rb)}
		}
		vec := func(n int, scale float32) *vector {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(rng.NormFloat64()) * scale
			}
			if scale == 0 {
				for i := range v {
					v[i] = 1
				}
			}
			return &vector{buf: newBuf(F32Bytes(v)), n: n}
		}
		router := vec(s.e*s.hidden, 0.05)
		l := &layer{mats: map[arch.Role]*matrix{
			arch.RoleRouter:     {buf: router.buf, typ: gguf.TensorF32, rows: s.e, cols: s.hidden, rb: 4 * s.hidden},
			arch.RoleExpertGate: stack(s.gateType, s.ffn, s.hidden),
			arch.RoleExpertUp:   stack(s.gateType, s.ffn, s.hidden),
			arch.RoleExpertDown: stack(s.downType, s.hidden, s.ffn),
		}, vecs: map[arch.Role]*vector{arch.RoleFFNNorm: vec(s.hidden, 0)}}
		if s.bias {
			l.vecs[arch.RoleRouterBias] = vec(s.e, 0.1)
			l.vecs[arch.RoleExpertGateBias], l.vecs[arch.RoleExpertUpBias] = vec(s.e*s.ffn, 0.1), vec(s.e*s.ffn, 0.1)
			l.vecs[arch.RoleExpertDownBias] = vec(s.e*s.hidden, 0.1)
		}
		expertBytes := 0
		for _, r := range []arch.Role{arch.RoleExpertGate, arch.RoleExpertUp, arch.RoleExpertDown} {
			expertBytes += int(l.mats[r].buf.Size()) / s.e
		}
		type run struct {
			n      int
			prompt bool
			path   string // "" the pass's choice; "tiles" moeGrouped's mul_mv_idg, "pairs" moePairs
		}
		layers, runs := 20, []run{{1, false, ""}, {8, false, ""}, {8, false, "tiles"}, {64, false, ""}, {64, false, "pairs"}, {64, true, ""}, {512, true, ""}}
		if d.Type == "cpu" {
			layers, runs = 1, runs[:2]
		}
		for _, ru := range runs {
			n := ru.n
			name := fmt.Sprintf("%s/n=%d", s.name, n)
			if ru.prompt {
				name += "/prompt"
			}
			if ru.path != "" {
				name += "/" + ru.path
			}
			b.Run(name, func(b *testing.B) {
				r := &BatchRunner{d: d, c: c}
				x, h, out := newBuf(F32Bytes(make([]float32, n*s.hidden))), newBuf(make([]byte, 4*n*s.hidden)), newBuf(make([]byte, 4*n*s.hidden))
				xv := make([]float32, n*s.hidden)
				for i := range xv {
					xv[i] = float32(rng.NormFloat64())
				}
				if err := d.Write(x, 0, F32Bytes(xv)); err != nil {
					b.Fatal(err)
				}
				r.x, r.h, r.out = x, h, out
				if err := r.moe.alloc(d, c, n); err != nil {
					b.Fatal(err)
				}
				defer r.moe.free()
				rec, err := d.Record()
				if err != nil {
					b.Fatal(err)
				}
				defer rec.Release()
				p := &pass{r: r, rec: rec, sh: shape{tokens: n, seqs: n, prompt: ru.prompt}, c: c}
				if p.sh.prompt {
					p.sh.seqs = 1
				}
				for range layers {
					switch ru.path {
					case "tiles":
						p.moeGrouped(l, false)
					case "pairs":
						p.moePairs(l)
					default:
						p.moe(l)
					}
				}
				if p.err != nil {
					b.Fatal(p.err)
				}
				if err := rec.End(); err != nil {
					b.Fatal(err)
				}
				if err := d.Replay(rec); err != nil {
					b.Fatal(err)
				}
				ids := make([]int32, n*s.k)
				if err := d.Read(r.moe.ids, 0, I32Bytes(ids)); err != nil {
					b.Fatal(err)
				}
				chosen := map[int32]bool{}
				for _, e := range ids {
					chosen[e] = true
				}
				for b.Loop() {
					if err := d.Replay(rec); err != nil {
						b.Fatal(err)
					}
				}
				per := float64(b.Elapsed().Nanoseconds()) / float64(b.N*layers)
				b.ReportMetric(per/1e3, "us/layer")
				b.ReportMetric(float64(len(chosen)), "experts")
				if !ru.prompt {
					b.ReportMetric(float64(len(chosen)*expertBytes)/per, "GB/s")
				}
			})
		}
		for _, buf := range bufs {
			buf.Free()
		}
	}
}
