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
func (r *Runner) releaseWeights(ws ...*backend.Weight) {
	if keepHostPages {
		return
	}
	for _, w := range ws {
		if w != nil {
			r.stats.HostReleased += releaseHostPages(w.Data)
		}
	}
}

func (r *Runner) uploadModel() error {
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

func (r *Runner) allocScratch() error {
	c := &r.cfg
	g := r.dev
	var err error
	alloc := func(dst *uint64, n int, what string) {
		if err == nil {
			if *dst, err = g.alloc(uint64(n), what); err == nil {
				r.owned = append(r.owned, *dst)
			}
		}
	}
	// Decode attention splits: a fixed number, one block per SM by default.
	r.maxSplit = r.tune.asplit
	if r.maxSplit == 0 {
		r.maxSplit = max(1, g.SMs/r.shape.dblocks)
	}
	r.grids = map[string]int{}
	maxK := max(c.Hidden, c.QDim(), c.FFN)
	for _, k := range r.mvKernels() {
		f, err := g.fn(k.name)
		if err != nil {
			return err
		}
		if err := g.allowSmem(f, k.name, k.cfg.smem(maxK)); err != nil {
			return err
		}
		n, err := g.occupancy(k.name, 256, k.cfg.smem(maxK))
		if err != nil {
			return err
		}
		r.grids[k.name] = n * g.SMs
	}
	if err := r.quantSetup(); err != nil { // kernels of the other block types (quant.go)
		return err
	}
	r.headBlocks = r.headGrid()
	alloc(&r.params, 64, "step parameters")
	alloc(&r.x, 4*c.Hidden, "residual")
	alloc(&r.qkv, 4*r.qkvRows, "qkv")
	alloc(&r.att, 4*c.QDim(), "attention output")
	alloc(&r.act, 4*c.FFN, "ffn activation")
	alloc(&r.logits[0], 4*c.Vocab, "logits")
	alloc(&r.logits[1], 4*c.Vocab, "logits")
	alloc(&r.pval, 4*r.headBlocks, "argmax partials")
	alloc(&r.pidx, 4*r.headBlocks, "argmax partials")
	alloc(&r.result, 64, "argmax")
	alloc(&r.pm, 4*c.Heads*r.maxSplit, "attention partials")
	alloc(&r.pl, 4*c.Heads*r.maxSplit, "attention partials")
	alloc(&r.pacc, 4*c.Heads*r.maxSplit*c.HeadDim, "attention partials")
	alloc(&r.counter, 4*r.shape.dblocks, "attention counters")
	np := r.npad
	alloc(&r.ptok, 4*np, "prefill tokens")
	alloc(&r.px, 4*np*c.Hidden, "prefill residual")
	alloc(&r.pqkv, 4*np*r.qkvRows, "prefill qkv")
	alloc(&r.pq, 4*np*c.QDim(), "prefill queries")
	alloc(&r.patt, 4*np*c.QDim(), "prefill attention output")
	alloc(&r.pact, 4*np*c.FFN, "prefill ffn activation")
	phiBytes := np * maxK
	if r.hasQuant() {
		phiBytes *= 2 // also the f16 activations of the other block types' products
	}
	alloc(&r.phi, phiBytes, "prefill activation planes")
	alloc(&r.plo, np*maxK, "prefill activation planes")
	alloc(&r.psx, 4*np*maxK/32, "prefill activation scales")
	if err != nil {
		return err
	}
	for _, z := range []struct {
		p uint64
		n int
	}{{r.counter, 4 * r.shape.dblocks}, {r.phi, phiBytes}, {r.plo, np * maxK}, {r.psx, 4 * np * maxK / 32}, {r.ptok, 4 * np}} {
		if err := g.memsetAsync(z.p, uint64(z.n)); err != nil {
			return err
		}
	}
	// Kernels whose dynamic shared memory may pass the default limit.
	ad, smem := r.attnKernel(r.kvCap)
	f, err := g.fn(ad)
	if err != nil {
		return err
	}
	if err := g.allowSmem(f, ad, smem); err != nil {
		return err
	}
	if smem := attnPrefillSmem(c.HeadDim); smem > 0 {
		name := fmt.Sprintf("attn_prefill_h%d", c.HeadDim)
		if f, err := g.fn(name); err != nil {
			return err
		} else if err := g.allowSmem(f, name, smem); err != nil {
			return err
		}
	}
	if r.tune.carveout >= 0 {
		names := []string{ad, "embed_step", "argmax_final"}
		for _, k := range r.mvKernels() {
			names = append(names, k.name)
		}
		for _, name := range names {
			f, err := g.fn(name)
			if err != nil {
				return err
			}
			if err := g.d.check("cuFuncSetAttribute carveout", g.d.call(g.d.cuFuncSetAttribute, f, 9, uintptr(r.tune.carveout))); err != nil {
				return err
			}
		}
	}
	return g.sync("scratch setup")
}

// reserve grows the KV cache to hold need positions (doubling, at most
// maxLen), moving what it holds and re-capturing the graph.
func (r *Runner) reserve(need int) error {
	if need <= r.kvCap {
		return nil
	}
	c := &r.cfg
	if err := r.settle(); err != nil {
		return err
	}
	ncap := min(r.maxLen, max(need, roundUp(2*r.kvCap, 256)))
	if need > ncap {
		return fmt.Errorf("cuda: %d positions do not fit the context of %d", need, r.maxLen)
	}
	per := uint64(2 * c.KVHeads * ncap * c.HeadDim)
	kc := make([]uint64, c.Layers)
	vc := make([]uint64, c.Layers)
	fail := func(err error) error {
		for i := range kc {
			r.dev.free(kc[i])
			r.dev.free(vc[i])
		}
		return fmt.Errorf("%w (growing the KV cache to %d positions)", err, ncap)
	}
	var err error
	for i := range c.Layers {
		if kc[i], err = r.dev.alloc(per, "KV cache"); err != nil {
			return fail(err)
		}
		if vc[i], err = r.dev.alloc(per, "KV cache"); err != nil {
			return fail(err)
		}
	}
	if r.len > 0 && r.kvCap > 0 {
		n := c.KVHeads * r.len * c.HeadDim
		blocks := uint32(min((n+255)/256, 4096))
		for i := range c.Layers {
			for _, p := range [][2]uint64{{r.kc[i], kc[i]}, {r.vc[i], vc[i]}} {
				if err := r.dev.launch("kv_copy", [3]uint32{blocks}, 256, 0, p[0], p[1], i32(c.KVHeads), i32(r.len), i32(r.kvCap), i32(ncap), i32(c.HeadDim)); err != nil {
					return fail(err)
				}
			}
		}
		if err := r.dev.sync("kv_copy"); err != nil {
			return fail(err)
		}
	}
	for i := range r.kc {
		r.dev.free(r.kc[i])
		r.dev.free(r.vc[i])
	}
	r.kc, r.vc, r.kvCap = kc, vc, ncap
	r.stats.KVCapacity = ncap
	if r.exec[0] != 0 {
		r.destroyGraphs()
		if !r.opts.NoGraph {
			return r.capture()
		}
	}
	return nil
}
