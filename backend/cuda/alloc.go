package cuda

import (
	"fmt"
	"math"
	"runtime/debug"
	"time"

	"inferno/arch"
	"inferno/backend"
)

// keepHostPages turns releaseWeights off (a test measures the difference).
var keepHostPages = false

// releaseWeights is where every matrix's host memory goes once the matrix
// is on the GPU, whatever its format: the pages of the GGUF file it lies
// in leave the process (releaseHostPages; the file stays mapped for its
// metadata, and a CPU backend reading the weights later faults them in
// again).
func (r *Model) releaseWeights(ws ...*backend.Weight) {
	if keepHostPages {
		return
	}
	for _, w := range ws {
		if w != nil {
			r.stats.HostReleased += releaseHostPages(w.Data)
		}
	}
}

func (r *Model) uploadModel() error {
	m, c := r.m.Tensors(), &r.cfg
	total := m.ReadBytes() + int64(len(m.Embed.Data))
	if m.Output == m.Embed {
		total -= int64(len(m.Output.Data))
	}
	r.prog = &progress{w: r.opts.Progress, total: total, start: time.Now()}
	r.weightRead = m.ReadBytes()

	var err error
	if r.embed, err = r.uploadWeight(m.Embed); err != nil {
		return err
	}
	if m.Output == m.Embed {
		r.out = r.embed
	} else if r.out, err = r.uploadWeight(m.Output); err != nil {
		return err
	}
	r.releaseWeights(m.Embed, m.Output)
	if r.out.rows != c.Vocab || r.out.cols != c.Hidden || r.embed.cols != c.Hidden {
		return fmt.Errorf("cuda: output head is %dx%d, want %dx%d", r.out.rows, r.out.cols, c.Vocab, c.Hidden)
	}
	if r.outNorm, err = r.uploadF32("output_norm", m.OutputNorm); err != nil {
		return err
	}
	r.layers = make([]gpuLayer, len(m.Layers))
	for i := range m.Layers {
		l, g := &m.Layers[i], &r.layers[i]
		mat := l.Matrix
		p := fmt.Sprintf("blk.%d.", i)
		if g.qkv, err = r.uploadConcat(p+"attn_qkv", mat(arch.RoleQ), mat(arch.RoleK), mat(arch.RoleV)); err != nil {
			return err
		}
		if g.o, err = r.uploadWeight(mat(arch.RoleO)); err != nil {
			return err
		}
		if g.gateUp, err = r.uploadGateUp(p+"ffn_gate_up", mat(arch.RoleGate), mat(arch.RoleUp)); err != nil {
			return err
		}
		if g.down, err = r.uploadWeight(mat(arch.RoleDown)); err != nil {
			return err
		}
		r.releaseWeights(mat(arch.RoleQ), mat(arch.RoleK), mat(arch.RoleV), mat(arch.RoleO), mat(arch.RoleGate), mat(arch.RoleUp), mat(arch.RoleDown))
		for _, v := range []struct {
			dst  *uint64
			role arch.Role
		}{{&g.attnNorm, arch.RoleAttnNorm}, {&g.ffnNorm, arch.RoleFFNNorm}, {&g.qNorm, arch.RoleQNorm}, {&g.kNorm, arch.RoleKNorm}} {
			if *v.dst, err = r.uploadF32(p+v.role.String(), l.Vector(v.role)); err != nil {
				return err
			}
		}
	}
	// The packing buffers are garbage now: give them back to the OS rather
	// than keep a model's worth of heap resident.
	debug.FreeOSMemory()
	r.qkvRows = c.QDim() + 2*c.KVDim()
	tab := ropeTable(c.Rope.Theta, c.HeadDim, r.maxLen)
	if r.rope, err = r.dev.alloc(uint64(4*len(tab)), "rope table"); err != nil {
		return err
	}
	return r.dev.upload(r.rope, f32Bytes(tab))
}

// ropeTable returns (cos, sin) of p * theta^(-2i/hd) for every position p
// < maxLen and pair i < hd/2, computed as the CPU reference computes them
// (float64, then rounded to float32).
func ropeTable(theta float64, hd, maxLen int) []float32 {
	half := hd / 2
	freq := make([]float64, half)
	for i := range freq {
		freq[i] = math.Pow(theta, -float64(2*i)/float64(hd))
	}
	tab := make([]float32, 2*half*maxLen)
	for p := 0; p < maxLen; p++ {
		for i, f := range freq {
			s, co := math.Sincos(float64(p) * f)
			tab[2*(p*half+i)] = float32(co)
			tab[2*(p*half+i)+1] = float32(s)
		}
	}
	return tab
}
