package cuda

// The mixture-of-experts layer (arch.OpMoE) on the GPU: the router's
// product, then kernels/moe.cuh's moe_route (each token's experts, the
// pairs grouped by expert), the chosen experts' gate/up and down products
// (moe_mvn_<type>, in the block formats' planes; only the chosen experts'
// rows are read) and moe_combine (each token's gated sum). Every launch
// has a grid fixed by the batch's size, so the step stays one graph.
//
// The options: softmax gating over the top k is the renormalized softmax
// (norm); with biases (gpt-oss) the router's joins its logits
// (moe_gate_b_<type>, or moe_route_b), the gate/up products are stored raw
// and glu_rows adds each pair's expert's gate and up biases before the
// activation (an activation other than SwiGLU, which the expert kernels'
// epilogue is alone, runs there too), and moe_combine_x adds the down
// biases as it sums; a post-norm has moe_combine_x store the sum, which
// resid_rows adds.

import (
	"fmt"

	"inferno/arch"
	"inferno/backend"
)

// moeMaxExperts and moeMaxTopK are kernels/moe.cuh's MOE_MAXE and
// MOE_MAXK; moeSmemMax the dynamic shared memory its kernels may take
// without asking for more (moe_gate's normed row, moe_mvnq's activations).
const (
	moeMaxExperts = 256
	moeMaxTopK    = 32
	moeSmemMax    = 48 << 10
	moeTile       = 32 // pairs of an mmhe tile (MOE_TILE)
)

// moeCounterBytes is moe_gate's counters: the blocks done of all and of
// each of MaxBatch tokens.
const moeCounterBytes = 4 * (1 + MaxBatch)

// moeQinSmem is moe_mvnq's dynamic shared memory for rows rows of K
// values (kernels/moe.cuh's moe_qin_stride a row: the int8 values, the
// scales of 32 (an even count), the sums of 16, 16-byte aligned).
func moeQinSmem(K, rows int) int {
	nu := K / 32
	return rows * ((K + 4*((nu+1)&^1) + 8*nu + 15) &^ 15)
}

// moeWeights are a mixture-of-experts layer's matrices on the GPU: the
// router (Experts x Hidden), the experts' gate and up rows stacked (expert
// e's interleaved gate/up matrix, gateUpRows(ExpertFFN) rows, from row e
// times that) and their down rows stacked (Hidden rows each).
type moeWeights struct {
	router, gateUp, down gpuWeight
	// MoE.Bias: the router's bias (Experts values), the experts' gate and
	// up biases in the order of their stacked gate/up rows (Experts x
	// gateUpRows(ExpertFFN)) and their down biases (Experts x Hidden);
	// else 0.
	routerBias, guBias, downBias uint64
}

// moeSetup allows mmhe, for the expert stacks' types, the shared memory
// it takes.
func (r *Model) moeSetup() error {
	for i := range r.layers {
		m := r.layers[i].moe
		if m == nil {
			continue
		}
		for _, w := range []*gpuWeight{&m.gateUp, &m.down} {
			for _, t := range mmheTiles {
				name := "mmhe_" + formatOf(w.typ).name + t.suffix
				fn, err := r.dev.fn(name)
				if err != nil {
					return err
				}
				if err := r.dev.allowSmem(fn, name, t.smem()); err != nil {
					return err
				}
			}
		}
		// The expert products' resident blocks (moeBlocks), moe_mvnq's at
		// the most pairs an expert it runs for: fewer than moeH tokens'
		// (moe_mvnq2: at most moeNT tokens').
		gu, dn := formatOf(m.gateUp.typ).name, formatOf(m.down.typ).name
		qin := func(tokens int) int {
			return min(moeQinSmem(r.cfg.MoE.ExpertFFN, min(MaxBatch, tokens)), moeSmemMax)
		}
		for _, k := range []struct {
			name string
			smem int
		}{{"moe_mvn_" + gu, 0}, {"moe_mvn2_" + gu, 0}, {"moe_mvn3_" + gu, 0}, {"moe_mvn_" + dn, 0}, {"moe_mvn2_" + dn, 0},
			{"moe_mvn3_" + dn, 0}, {"moe_mvnq_" + dn, qin(r.tune.moeH - 1)}, {"moe_mvnq3_" + dn, qin(r.tune.moeH - 1)},
			{"moe_mvnq2_" + dn, qin(min(r.tune.moeNT, r.tune.moeH-1))}} {
			if _, ok := r.grids[k.name]; ok {
				continue
			}
			if err := r.residentGrid(k.name, k.smem); err != nil {
				return err
			}
		}
	}
	return nil
}

// moeBlocks returns an expert's blocks of the expert product name over
// ntiles tiles for a step of at most chosen experts: tune.moeB, or by
// default the blocks resident at once shared by the experts but at least
// tune.moeBMin (a few tokens' experts spread over the resident blocks;
// more tokens' take a few tiles a block, more blocks than fit at once);
// at most a tile each.
func (r *Model) moeBlocks(name string, ntiles, chosen int) int {
	n := r.tune.moeB
	if n <= 0 {
		n = ntiles
		if g := r.grids[name]; g > 0 {
			n = max((g+chosen-1)/max(1, chosen), r.tune.moeBMin)
		}
	}
	return max(1, min(ntiles, n))
}

// mats returns the layer's matrices: Q/K/V, O, and the feed-forward's
// (gate/up and down, or the router and the expert stacks).
func (l *gpuLayer) mats() []*gpuWeight {
	if m := l.moe; m != nil {
		return []*gpuWeight{&l.qkv, &l.o, &m.router, &m.gateUp, &m.down}
	}
	return []*gpuWeight{&l.qkv, &l.o, &l.gateUp, &l.down}
}

// checkMoE tells whether the kernels run c's mixture of experts.
func checkMoE(c *arch.Config) error {
	m := &c.MoE
	switch {
	case !m.Enabled():
		return nil
	case m.Experts > moeMaxExperts:
		return fmt.Errorf("cuda: %d experts a layer: the CUDA backend routes at most %d", m.Experts, moeMaxExperts)
	case m.TopK > moeMaxTopK:
		return fmt.Errorf("cuda: %d experts a token: the CUDA backend runs at most %d", m.TopK, moeMaxTopK)
	case m.ExpertFFN%32 != 0:
		return fmt.Errorf("cuda: expert feed-forward width %d is not a multiple of 32", m.ExpertFFN)
	case 4*c.Hidden > moeSmemMax:
		return fmt.Errorf("cuda: hidden size %d: the CUDA backend's router keeps at most %d values of a token in shared memory", c.Hidden, moeSmemMax/4)
	}
	return nil
}

// checkExpertType tells whether the expert stack w can be multiplied by
// moe_mvn: a block format (the planes), not a float type.
func checkExpertType(w *backend.Weight) error {
	if err := checkWeight(w); err != nil {
		return err
	}
	if formatOf(w.Type).float {
		return fmt.Errorf("cuda: expert tensor %s is %s: the CUDA backend multiplies experts in the block formats only (quantize the model, e.g. inferno quantize IN OUT --type Q8_0, or use a CPU backend)", w.Name, w.Type)
	}
	return nil
}

// uploadMoE uploads layer l's router and expert stacks (prefix p names
// them).
func (r *Model) uploadMoE(p string, l *arch.Layer) (*moeWeights, error) {
	c := &r.cfg
	E, F := c.MoE.Experts, c.MoE.ExpertFFN
	router, gate, up, down := l.Matrix(arch.RoleRouter), l.Matrix(arch.RoleExpertGate), l.Matrix(arch.RoleExpertUp), l.Matrix(arch.RoleExpertDown)
	for _, w := range []*backend.Weight{gate, up, down} {
		if err := checkExpertType(w); err != nil {
			return nil, err
		}
	}
	if gate.Type != up.Type {
		return nil, fmt.Errorf("cuda: %sffn_gate_exps is %s and ffn_up_exps %s; the CUDA backend needs one type for both", p, gate.Type, up.Type)
	}
	if gate.Rows != E*F || up.Rows != E*F || gate.Cols != c.Hidden || up.Cols != c.Hidden || down.Rows != E*c.Hidden || down.Cols != F {
		return nil, fmt.Errorf("cuda: %s expert stacks: gate %dx%d, up %dx%d, down %dx%d, want %dx%d and %dx%d", p, gate.Rows, gate.Cols, up.Rows, up.Cols, down.Rows, down.Cols, E*F, c.Hidden, E*c.Hidden, F)
	}
	m := &moeWeights{}
	var err error
	if m.router, err = r.uploadWeight(router); err != nil {
		return nil, err
	}
	R := gateUpRows(F)
	m.gateUp, err = r.uploadPacked(p+"ffn_gate_up_exps", gate.Type, E*R, c.Hidden, func(i int) []byte {
		e, j := i/R, i%R
		isUp, s := gateUpRow(j)
		if s >= F {
			return nil
		}
		if isUp {
			return up.Row(e*F + s)
		}
		return gate.Row(e*F + s)
	}, int64(len(gate.Data)+len(up.Data)))
	if err != nil {
		return nil, err
	}
	if m.down, err = r.uploadWeight(down); err != nil {
		return nil, err
	}
	r.releaseWeights(router, gate, up, down)
	if c.MoE.Bias {
		if err := r.uploadMoEBiases(p, l, m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// uploadMoEBiases uploads layer l's router and expert biases (MoE.Bias;
// p names the layer), the gate and up biases interleaved as the stacked
// gate/up rows are.
func (r *Model) uploadMoEBiases(p string, l *arch.Layer, m *moeWeights) error {
	c := &r.cfg
	E, F, H := c.MoE.Experts, c.MoE.ExpertFFN, c.Hidden
	rb, gb, ub, db := l.Vector(arch.RoleRouterBias), l.Vector(arch.RoleExpertGateBias), l.Vector(arch.RoleExpertUpBias), l.Vector(arch.RoleExpertDownBias)
	if len(rb) != E || len(gb) != E*F || len(ub) != E*F || len(db) != E*H {
		return fmt.Errorf("cuda: %sexpert biases hold %d, %d, %d and %d values, want %d, %d, %d and %d", p, len(rb), len(gb), len(ub), len(db), E, E*F, E*F, E*H)
	}
	R := gateUpRows(F)
	gu := make([]float32, E*R)
	for e := range E {
		for j := range R {
			isUp, s := gateUpRow(j)
			switch {
			case s >= F:
			case isUp:
				gu[e*R+j] = ub[e*F+s]
			default:
				gu[e*R+j] = gb[e*F+s]
			}
		}
	}
	var err error
	if m.routerBias, err = r.uploadF32(p+arch.RoleRouterBias.String(), rb); err != nil {
		return err
	}
	if m.guBias, err = r.uploadF32(p+"ffn_gate_up_exps.bias", gu); err != nil {
		return err
	}
	m.downBias, err = r.uploadF32(p+arch.RoleExpertDownBias.String(), db)
	return err
}

// moeUnread returns the bytes of a mixture-of-experts model's expert
// stacks a decode step of one token does not read: all but TopK of each
// layer's Experts.
func moeUnread(c *arch.Config, w *arch.Weights) int64 {
	if !c.MoE.Enabled() {
		return 0
	}
	var n int64
	for i := range w.Layers {
		for _, role := range []arch.Role{arch.RoleExpertGate, arch.RoleExpertUp, arch.RoleExpertDown} {
			if m := w.Layers[i].Matrix(role); m != nil {
				n += int64(len(m.Data)) / int64(c.MoE.Experts) * int64(c.MoE.Experts-c.MoE.TopK)
			}
		}
	}
	return n
}

// moeScratch holds a batched runner's mixture-of-experts buffers for
// MaxBatch tokens (MaxBatch*TopK pairs).
type moeScratch struct {
	logits    uint64 // router logits, tokens x Experts
	wts, pick uint64 // per pair: gating weight, expert
	grp       uint64 // 1 + 3*Experts ints: the chosen experts (moe_route)
	order     uint64 // the pairs, expert by expert
	act       uint64 // pairs x ExpertFFN: the gated activations
	xq, xs    uint64 // their int8 activations and scales (qact8)
	xsum      uint64 // and sums of 16
	y         uint64 // pairs x Hidden: each pair's expert output
	counter   uint64 // moe_gate's blocks done, of all and of each token (zero between launches)
	tiles     uint64 // the chosen experts' tiles of moeTile pairs (mmhe)
	xh, hs    uint64 // the pairs' f16 activations and scales (qact_h, for mmhe)
	raw       uint64 // MoE.Bias or an activation other than SwiGLU: pairs x gateUpRows(ExpertFFN), the gate/up products before their biases and activation
}

// moeBuf is one buffer of moeScratch: where its pointer goes, its bytes
// and its name.
type moeBuf struct {
	dst  *uint64
	n    int
	what string
}

// buffers lists s's buffers and their sizes for c: what allocMoE
// allocates and moeScratchBytes counts.
func (s *moeScratch) buffers(c *arch.Config) []moeBuf {
	if !c.MoE.Enabled() {
		return nil
	}
	m := &c.MoE
	pairs := MaxBatch * m.TopK
	F := m.ExpertFFN
	var raw []moeBuf
	if m.Bias || c.Act != arch.SwiGLU {
		raw = []moeBuf{{&s.raw, 4 * pairs * gateUpRows(F), "expert gate/up products"}}
	}
	return append(raw, []moeBuf{
		{&s.logits, 4 * MaxBatch * m.Experts, "router logits"},
		{&s.wts, 4 * pairs, "expert weights"},
		{&s.pick, 4 * pairs, "expert picks"},
		{&s.grp, 4 * (1 + 3*m.Experts), "expert groups"},
		{&s.order, 4 * pairs, "expert order"},
		{&s.act, 4 * pairs * F, "expert activations"},
		{&s.xq, pairs * F, "expert activations (int8)"},
		{&s.xs, 4 * pairs * F / 32, "expert activation scales"},
		{&s.xsum, pairs * F / 4, "expert activation sums"},
		{&s.y, 4 * pairs * c.Hidden, "expert outputs"},
		{&s.counter, moeCounterBytes, "router counters"},
		{&s.tiles, 4 * (1 + pairs/moeTile + m.Experts), "expert tiles"},
		{&s.xh, 2 * pairs * F, "expert activations (f16)"},
		{&s.hs, 4 * pairs, "expert activation scales (f16)"},
	}...)
}

// moeScratchBytes is the device memory of moeScratch for c.
func moeScratchBytes(c *arch.Config) int64 {
	var n int64
	for _, b := range (&moeScratch{}).buffers(c) {
		n += int64(b.n)
	}
	return n
}

// allocMoE allocates the MoE scratch through alloc (BatchRunner.allocScratch's).
func (br *BatchRunner) allocMoE(alloc func(dst *uint64, n int, what string)) {
	for _, b := range br.moe.buffers(&br.cfg) {
		alloc(b.dst, b.n, b.what)
	}
}

// moeOp enqueues OpMoE of layer i for n tokens (the rows of br.px): the
// router's logits, the tokens' int8 activations and the routing (moe_gate
// for a float router; else the router's product, a decode matvec when mv,
// moe_route and qact8), the gate/up products, the down products (their
// activations quantized in the blocks: moe_mvnq; or qact8 and moe_mvn for
// widths past its shared memory) and moe_combine into br.px; with the
// options, as the top of this file says.
func (br *BatchRunner) moeOp(l *launcher, i, n int, mv bool) {
	c := &br.cfg
	base := br.base
	w := &base.layers[i]
	mw, s := w.moe, &br.moe
	if mw == nil {
		l.then("moe", fmt.Errorf("cuda: layer %d has no experts", i))
		return
	}
	m := &c.MoE
	E, k, F, H := m.Experts, m.TopK, m.ExpertFFN, c.Hidden
	eps := f32(c.Eps)
	norm := 0
	if m.NormTopK || m.Gating == arch.GateSoftmaxTopK {
		norm = 1 // the softmax over the chosen k: the renormalized softmax over all
	}
	bias := mw.routerBias != 0
	if f := formatOf(mw.router.typ); f.float && mw.router.next == nil {
		wpe := 4 // warps an expert
		if n >= base.tune.moeGate {
			wpe = 1
		}
		epb := 8 / wpe // experts a block
		name, args := "moe_gate_"+f.name, []uint64{mw.router.lo, i32(E), i32(H), br.px, w.ffnNorm, eps, s.logits, br.phi, br.psx, br.plo,
			i32(n), i32(k), i32(norm), s.wts, s.pick, s.grp, s.order, s.tiles, s.counter, i32(wpe)}
		if bias {
			name, args = "moe_gate_b_"+f.name, append(args, mw.routerBias)
		}
		l.launch(name, [3]uint32{uint32(n), uint32((E + epb - 1) / epb)}, 256, uint32(4*H), args...)
	} else {
		if mv {
			base.mv(l, "store", base.tune.o, &mw.router, br.px, w.ffnNorm, s.logits, E, 0, 0)
		} else {
			br.matmul(l, "store", &mw.router, br.px, w.ffnNorm, s.logits, E, 0, n)
		}
		args := []uint64{s.logits, i32(n), i32(E), i32(k), i32(norm), s.wts, s.pick, s.grp, s.order, s.tiles}
		if bias {
			l.launch("moe_route_b", [3]uint32{1}, 1024, 0, append(args, mw.routerBias)...)
		} else {
			l.launch("moe_route", [3]uint32{1}, 1024, 0, args...)
		}
		l.launch("qact8", [3]uint32{uint32(n)}, 256, 0, br.px, i32(H), i32(H), w.ffnNorm, eps, br.phi, br.psx, br.plo)
	}
	chosen := uint32(min(E, n*k)) // blocks of experts (those past the chosen exit)
	gu, dn := &mw.gateUp, &mw.down
	R := gateUpRows(F)
	// The gate/up products' output: SwiGLU's activations (the epilogue's),
	// or with biases or another activation the raw rows glu_rows then
	// activates.
	act := epOf(actKind(c.Act))
	raw := mw.guBias != 0 || c.Act != arch.SwiGLU
	guY, guLd, guEp := s.act, F, act
	if raw {
		guY, guLd, guEp = s.raw, R, epStore
	}
	glu := func() {
		if raw {
			l.launch("glu_rows", [3]uint32{uint32(n * k), uint32((F + 255) / 256)}, 256, 0,
				s.raw, i32(R), s.act, i32(F), i32(F), i32(act), mw.guBias, s.pick)
		}
	}
	if n >= base.tune.moeH {
		// f16 tensor cores, a tile of up to t.bn pairs of one expert a
		// block (blocks past the tiles, or not at a tile's start, exit).
		tiles := uint32((n*k+moeTile-1)/moeTile) + chosen
		t := mmheFor(n*k, int(chosen))
		base.qactH(l, br.px, w.ffnNorm, H, n, br.pxq, br.psx)
		l.launch("mmhe_"+formatOf(gu.typ).name+t.suffix, [3]uint32{uint32((R + t.bm - 1) / t.bm), tiles}, 256, uint32(t.smem()),
			gu.lo, gu.hi, gu.m0, gu.m1, i32(R), i32(R), i32(H), br.pxq, br.psx, i32(n), guY, i32(guLd), i32(guLd), i32(guEp), s.grp, s.tiles, s.order, i32(k))
		glu()
		base.qactH(l, s.act, 0, F, n*k, s.xh, s.hs)
		l.launch("mmhe_"+formatOf(dn.typ).name+t.suffix, [3]uint32{uint32((H + t.bm - 1) / t.bm), tiles}, 256, uint32(t.smem()),
			dn.lo, dn.hi, dn.m0, dn.m1, i32(H), i32(H), i32(F), s.xh, s.hs, i32(n*k), s.y, i32(H), i32(H), i32(epStore), s.grp, s.tiles, s.order, i32(1))
		br.moeCombine(l, w, n)
		return
	}
	name := "moe_mvn" + moeVariant(n, H, base.tune.moeNT) + "_" + formatOf(gu.typ).name
	l.launch(name, [3]uint32{uint32(base.moeBlocks(name, (R/2+7)/8, int(chosen))), chosen}, 256, 0,
		gu.lo, gu.hi, gu.m0, gu.m1, i32(R), i32(H), br.phi, br.psx, br.plo, uint64(0), i32(k), s.grp, s.order, guY, i32(guLd), i32(guLd), i32(guEp))
	glu()
	// The down product: moe_mvnq quantizes each pair's activations (at
	// most n pairs an expert) in shared memory; wider rows' activations
	// past its shared memory take qact8 and moe_mvn.
	nt := moeVariant(n, F, base.tune.moeNT)
	name, smem := "moe_mvnq"+nt+"_"+formatOf(dn.typ).name, moeQinSmem(F, n)
	if smem > moeSmemMax {
		l.launch("qact8", [3]uint32{uint32(n * k)}, 256, 0, s.act, i32(F), i32(F), uint64(0), eps, s.xq, s.xs, s.xsum)
		name, smem = "moe_mvn"+nt+"_"+formatOf(dn.typ).name, 0
	}
	tiles := ((H+1)/2 + 7) / 8
	l.launch(name, [3]uint32{uint32(base.moeBlocks(name, tiles, int(chosen))), chosen}, 256, uint32(smem),
		dn.lo, dn.hi, dn.m0, dn.m1, i32(H), i32(F), s.xq, s.xs, s.xsum, s.act, i32(1), s.grp, s.order, s.y, i32(H), i32(H), i32(epStore))
	br.moeCombine(l, w, n)
}

// moeVariant returns the suffix of the expert product (moe_mvn, moe_mvnq)
// for a step of n tokens (fewer than moeH) over rows of K values: "3"
// where a row takes 2049 to 3072 values (gpt-oss's 2880), whatever n:
// three units a row and lane, so the row in one round and a tile's
// weights read and held once for all of an expert's pairs, four at a time
// (two units would take two rounds, the weights reloaded for every chunk
// of pairs), and a pair's sums the same at every n; else with at most
// moeNT tokens "2" (pairs two at a time: fewer registers, three blocks an
// SM), more "" (pairs eight at a time).
func moeVariant(n, K, moeNT int) string {
	switch {
	case K > 64*32 && K <= 96*32:
		return "3"
	case n > moeNT:
		return ""
	}
	return "2"
}

// moeCombine enqueues the sum of each of n tokens' experts' outputs,
// weighted by their gating weights, into the residual stream: moe_combine,
// or with down biases or a post-norm moe_combine_x (and resid_rows).
func (br *BatchRunner) moeCombine(l *launcher, w *gpuLayer, n int) {
	c, s := &br.cfg, &br.moe
	H, k := c.Hidden, c.MoE.TopK
	grid := [3]uint32{uint32(n), uint32((H + 255) / 256)}
	if w.moe.downBias == 0 && w.ffnPost == 0 {
		l.launch("moe_combine", grid, 256, 0, br.px, i32(H), i32(k), s.wts, s.y)
		return
	}
	dst, store := br.px, 0
	if w.ffnPost != 0 {
		dst, store = br.pxo, 1
	}
	l.launch("moe_combine_x", grid, 256, 0, dst, i32(H), i32(k), s.wts, s.y, s.pick, w.moe.downBias, i32(store))
	if w.ffnPost != 0 {
		br.resid(l, n, br.pxo, 0, w.ffnPost)
	}
}
