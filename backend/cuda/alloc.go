package cuda

import (
	"fmt"
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
//
// Views of one tensor (arch.Weight.RowRange: a fused QKV or gate/up
// matrix) go in one call: releaseHostPages releases the range they cover
// once.
func (r *Model) releaseWeights(ws ...*backend.Weight) {
	if keepHostPages {
		return
	}
	var bufs [][]byte
	for _, w := range ws {
		if w != nil {
			bufs = append(bufs, w.Data)
		}
	}
	r.stats.HostReleased += releaseHostPages(bufs...)
}

func (r *Model) uploadModel() error {
	m, c := r.m.Tensors(), &r.cfg
	total := m.ReadBytes() + int64(len(m.Embed.Data))
	if m.Output == m.Embed {
		total -= int64(len(m.Output.Data))
	}
	r.prog = &progress{w: r.opts.Progress, total: total, start: time.Now()}
	r.weightRead = m.ReadBytes() - moeUnread(c, m)

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
		// Normal-style or partial RoPE: Q and K rows in the kernels'
		// order (rope.go). Views of a fused QKV tensor are read as they
		// are.
		q, err := ropeRows(mat(arch.RoleQ), c.Rope.Style, c.HeadDim, c.RotaryDims())
		if err != nil {
			return err
		}
		k, err := ropeRows(mat(arch.RoleK), c.Rope.Style, c.HeadDim, c.RotaryDims())
		if err != nil {
			return err
		}
		if g.qkv, err = r.uploadConcat(p+"attn_qkv", q, k, mat(arch.RoleV)); err != nil {
			return err
		}
		if g.o, err = r.uploadWeight(mat(arch.RoleO)); err != nil {
			return err
		}
		if c.MoE.Enabled() {
			if g.moe, err = r.uploadMoE(p, l); err != nil {
				return err
			}
		} else {
			if g.gateUp, err = r.uploadGateUp(p+"ffn_gate_up", mat(arch.RoleGate), mat(arch.RoleUp)); err != nil {
				return err
			}
			if g.down, err = r.uploadWeight(mat(arch.RoleDown)); err != nil {
				return err
			}
			if c.Act != arch.SwiGLU {
				r.rawGateUp = true // some products have no epilogue for it: glu_rows (options.go)
			}
		}
		r.releaseWeights(mat(arch.RoleQ), mat(arch.RoleK), mat(arch.RoleV), mat(arch.RoleO), mat(arch.RoleGate), mat(arch.RoleUp), mat(arch.RoleDown))
		for _, v := range []struct {
			dst  *uint64
			role arch.Role
		}{{&g.attnNorm, arch.RoleAttnNorm}, {&g.ffnNorm, arch.RoleFFNNorm}} {
			if *v.dst, err = r.uploadF32(p+v.role.String(), l.Vector(v.role)); err != nil {
				return err
			}
		}
		if err := r.uploadAttnVectors(p, l, g); err != nil {
			return err
		}
		if err := r.uploadOptionVectors(p, i, l, g); err != nil {
			return err
		}
	}
	// The packing buffers are garbage now: give them back to the OS rather
	// than keep a model's worth of heap resident.
	debug.FreeOSMemory()
	r.qkvRows = c.QDim() + 2*c.KVDim()
	if r.rope, err = r.uploadTable("rope table", layerRopeTable(c, &c.Rope, r.maxLen)); err != nil {
		return err
	}
	if c.Window > 0 && c.LocalRope.Theta != 0 {
		if r.ropeLocal, err = r.uploadTable("local layers' rope table", layerRopeTable(c, &c.LocalRope, r.maxLen)); err != nil {
			return err
		}
	}
	for i := range r.layers {
		g := &r.layers[i]
		if g.rope = r.rope; c.LayerRope(i) == &c.LocalRope {
			g.rope = r.ropeLocal
		}
	}
	return nil
}

// uploadTable uploads a float32 table computed here (not counted in the
// upload's progress, which counts the file's bytes).
func (r *Model) uploadTable(what string, tab []float32) (uint64, error) {
	p, err := r.dev.alloc(uint64(4*len(tab)), what)
	if err != nil {
		return 0, err
	}
	return p, r.dev.upload(p, f32Bytes(tab))
}
