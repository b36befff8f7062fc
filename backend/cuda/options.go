package cuda

// The options beyond Qwen3's that run as kernels of their own or as
// variants of the attention (rope.go has those that need none, moe.go the
// experts' biases and gating):
//
//   - sliding windows and sinks: the extended attention kernels
//     (pattn_dec*_ws, pattn_pre_*_ws, pattn_comb_*_ws), taken by every
//     layer of a model with either (a global layer: window 0). A local
//     layer's keys before its window are neither read nor looked up; the
//     sinks join each head's softmax where its output is normalized.
//   - the attention scale: the kernels' scale argument.
//   - the embedding's scale: scale_rows after the embedding.
//   - an output bias and post-norms: the product stores its output (in
//     pxo) and resid_rows adds it to the residual stream, with the bias
//     and the post-norm; without either the product adds it (its "add"
//     epilogue) as before.
//   - GeGLU and OpenAI's clamped SwiGLU: the gate/up products' epilogues
//     (kinds "geglu" and "swiglu_oai") of the kernels that take their
//     epilogue at run time and whose registers the other activations do
//     not change (mvq and mvh for one token, mmq, mmh, mvhn and mmw for
//     more: gluEpilogue); the others (Q8_0's own, instantiated for SwiGLU
//     only; mvqn; the experts') store the gate/up rows raw (praw) and
//     glu_rows applies the activation.
//
// Each costs the families without it nothing: their kernels and launches
// are those of before. A kernel image built before these kernels lacks
// them, and a model that needs them is refused in one line at Load
// (checkOptionKernels).

import (
	"fmt"

	"inferno/arch"
)

// needsExt reports whether c's attention takes the extended kernels: some
// layer has a sliding window, or the heads have sinks.
func needsExt(c *arch.Config) bool { return c.Window > 0 || c.Sinks }

// actKind returns the epilogue kind of activation a's gate/up products.
func actKind(a arch.Activation) string {
	switch a {
	case arch.GeGLU:
		return "geglu"
	case arch.SwiGLUOAI:
		return "swiglu_oai"
	}
	return "swiglu"
}

// gluKind reports whether epilogue kind is a gated activation (its
// outputs pair a gate row and its up row).
func gluKind(kind string) bool { return kind == "swiglu" || kind == "geglu" || kind == "swiglu_oai" }

// wsSuffix is the name suffix of the attention kernels the model takes:
// "_ws" for the extended ones.
func (r *Model) wsSuffix() string {
	if r.ext {
		return "_ws"
	}
	return ""
}

// attnKernel names the attention kernel base (pattn_dec, pattn_decf,
// pattn_decc) for the model's shape and options.
func (r *Model) attnKernel(base string) string {
	g := r.shape.dg
	if base == "pattn_pre" {
		g = r.shape.pg
	}
	return fmt.Sprintf("%s_h%d_g%d%s", base, r.cfg.HeadDim, g, r.wsSuffix())
}

// optionKernels lists the kernels of this file, moe.go's and rope.go's
// that c's options need beyond Qwen3's, each with the option that needs
// it.
func (r *Model) optionKernels() [][2]string {
	c := &r.cfg
	var ks [][2]string
	if r.ext {
		what := "sliding-window attention"
		if c.Window == 0 {
			what = "attention sinks"
		}
		for _, k := range []string{r.attnKernel("pattn_dec"), r.attnKernel("pattn_decf"), r.attnKernel("pattn_pre"),
			fmt.Sprintf("pattn_comb_h%d_ws", c.HeadDim)} {
			ks = append(ks, [2]string{what, k})
		}
	}
	if c.EmbedScale != 0 && c.EmbedScale != 1 {
		ks = append(ks, [2]string{"scaled embeddings", "scale_rows"})
	}
	if c.PostNorm || c.OutBias {
		ks = append(ks, [2]string{"post-norms and output biases", "resid_rows"})
	}
	if c.Act != arch.SwiGLU {
		ks = append(ks, [2]string{c.Act.String(), "glu_rows"})
	}
	if m := &c.MoE; m.Enabled() && m.Bias {
		ks = append(ks, [2]string{"mixture-of-experts biases", "moe_route_b"}, [2]string{"mixture-of-experts biases", "moe_combine_x"},
			[2]string{"mixture-of-experts biases", "glu_rows"})
	}
	return ks
}

// checkOptionKernels fails, in one line, when the device's kernel image
// lacks a kernel the model's options need (an image built before them).
func (r *Model) checkOptionKernels() error {
	for _, k := range r.optionKernels() {
		if _, err := r.dev.fn(k[1]); err != nil {
			return fmt.Errorf("cuda: %s needs kernel %s, which this build's kernel image lacks: rebuild the images (backend/cuda/build_ptx.sh) or use a CPU backend", k[0], k[1])
		}
	}
	return nil
}

// mvKernels returns the one-token matvecs of Q8_0's own kernels the model
// launches: the tuning's, and with the options the same configurations'
// "store" epilogues (O and down before resid_rows, gate/up before
// glu_rows).
func (r *Model) mvKernels() []mvKernel {
	c, t := &r.cfg, r.tune
	ks := t.mvKernels()
	if c.PostNorm || c.OutBias {
		ks = append(ks, mvKernel{t.o.name("store"), t.o})
	}
	if c.PostNorm {
		ks = append(ks, mvKernel{t.down.name("store"), t.down})
	}
	if c.Act != arch.SwiGLU {
		ks = append(ks, mvKernel{t.gu.name("store"), t.gu})
	}
	return ks
}

// prod enqueues a product of n tokens: a decode matvec when mv (m its
// configuration for Q8_0's own kernels), else matmul's. ldy is the
// output's row stride and nout a gated epilogue's outputs (0 otherwise).
func (br *BatchRunner) prod(l *launcher, mv bool, m mvCfg, kind string, w *gpuWeight, x, gain, y uint64, ldy, nout, n int) {
	if mv {
		if nout == 0 {
			nout = ldy
		}
		br.base.mv(l, kind, m, w, x, gain, y, nout, 0, 0)
		return
	}
	br.matmul(l, kind, w, x, gain, y, ldy, nout, n)
}

// embedScale enqueues the embedding's scale (Config.EmbedScale) of the n
// rows of px, if the model has one.
func (br *BatchRunner) embedScale(l *launcher, n int) {
	c := &br.cfg
	if c.EmbedScale != 0 && c.EmbedScale != 1 {
		l.launch("scale_rows", [3]uint32{uint32(n)}, 256, 0, br.px, i32(c.Hidden), f32(c.EmbedScale))
	}
}

// outOp enqueues OpOut of layer i for n tokens: x += O att, or with an
// output bias or a post-norm, O att stored to pxo and added by
// resid_rows.
func (br *BatchRunner) outOp(l *launcher, i, n int, mv bool) {
	c, w, t := &br.cfg, &br.base.layers[i], br.base.tune
	if w.oBias == 0 && w.attnPost == 0 {
		br.prod(l, mv, t.o, "add", &w.o, br.patt, 0, br.px, c.Hidden, 0, n)
		return
	}
	br.prod(l, mv, t.o, "store", &w.o, br.patt, 0, br.pxo, c.Hidden, 0, n)
	br.resid(l, n, br.pxo, w.oBias, w.attnPost)
}

// resid enqueues resid_rows: px += y + bias, normalized times gain when
// gain is not 0.
func (br *BatchRunner) resid(l *launcher, n int, y, bias, gain uint64) {
	c := &br.cfg
	l.launch("resid_rows", [3]uint32{uint32(n)}, 256, 0, br.px, y, bias, gain, f32(c.Eps), i32(c.Hidden))
}

// gluEpilogue reports whether the product of w for n tokens (a decode
// matvec when mv) takes kernels with an epilogue for every gated
// activation (the top of this file), following matmulFrom's and
// Model.product's choices.
func (br *BatchRunner) gluEpilogue(w *gpuWeight, n int, mv bool) bool {
	if w.next != nil {
		return false
	}
	if mv {
		return !br.base.ownQ8(w.typ)
	}
	return !br.ownMM(w, n, br.bt.mmMin) && (formatOf(w.typ).float || n > br.base.tune.mvn)
}

// gateUpOp enqueues OpGateUp of layer i for n tokens into pact: the
// gate/up product with the activation in its epilogue, or, where its
// kernels have none for an activation other than SwiGLU (gluEpilogue),
// stored raw (praw) and activated by glu_rows.
func (br *BatchRunner) gateUpOp(l *launcher, i, n int, mv bool) {
	c, w, t := &br.cfg, &br.base.layers[i], br.base.tune
	kind := actKind(c.Act)
	if kind == "swiglu" || br.gluEpilogue(&w.gateUp, n, mv) {
		br.prod(l, mv, t.gu, kind, &w.gateUp, br.px, w.ffnNorm, br.pact, c.FFN, c.FFN, n)
		return
	}
	R := w.gateUp.rows
	br.prod(l, mv, t.gu, "store", &w.gateUp, br.px, w.ffnNorm, br.praw, R, 0, n)
	l.launch("glu_rows", [3]uint32{uint32(n), uint32((c.FFN + 255) / 256)}, 256, 0,
		br.praw, i32(R), br.pact, i32(c.FFN), i32(c.FFN), i32(epOf(kind)), uint64(0), uint64(0))
}

// downOp enqueues OpDown of layer i for n tokens: x += Down act, or with a
// post-norm, stored to pxo and added by resid_rows.
func (br *BatchRunner) downOp(l *launcher, i, n int, mv bool) {
	c, w, t := &br.cfg, &br.base.layers[i], br.base.tune
	if w.ffnPost == 0 {
		br.prod(l, mv, t.down, "add", &w.down, br.pact, 0, br.px, c.Hidden, 0, n)
		return
	}
	br.prod(l, mv, t.down, "store", &w.down, br.pact, 0, br.pxo, c.Hidden, 0, n)
	br.resid(l, n, br.pxo, 0, w.ffnPost)
}

// attnExt returns the extended attention kernels' last arguments for
// layer w (its window and sinks), or none.
func (br *BatchRunner) attnExt(w *gpuLayer) []uint64 {
	if !br.base.ext {
		return nil
	}
	return []uint64{i32(w.window), w.sinks}
}

// uploadOptionVectors uploads layer i's vectors of the options (p names
// the layer): the heads' sinks, the output bias and the post-norms' gains,
// each where the model has it; and notes the layer's window.
func (r *Model) uploadOptionVectors(p string, i int, l *arch.Layer, g *gpuLayer) error {
	c := &r.cfg
	g.window = c.LayerWindow(i)
	for _, v := range []struct {
		on   bool
		dst  *uint64
		role arch.Role
	}{
		{c.Sinks, &g.sinks, arch.RoleSinks}, {c.OutBias, &g.oBias, arch.RoleOBias},
		{c.PostNorm, &g.attnPost, arch.RoleAttnPostNorm}, {c.PostNorm, &g.ffnPost, arch.RoleFFNPostNorm},
	} {
		if !v.on {
			continue
		}
		x := l.Vector(v.role)
		if len(x) == 0 {
			return fmt.Errorf("cuda: %s%v: no values", p, v.role)
		}
		var err error
		if *v.dst, err = r.uploadF32(p+v.role.String(), x); err != nil {
			return err
		}
	}
	return nil
}
