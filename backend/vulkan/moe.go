package vulkan

// The mixture-of-experts layer (arch.OpMoE) on the device: the router's
// product (mul_mv, or mul_mm in prompts), moe_route (each token's TopK
// experts and their gating weights, on the device), the chosen experts'
// gate and up products, their activation with the experts' biases, the
// down products and the weighted sum into the residual stream, or
// through the post-norm. The expert products read only the chosen
// experts' rows:
//   - in decode passes of up to 8 tokens mul_mv_id_<type>, a workgroup a
//     (token, slot) pair and tile of rows, the gate and up products
//     normalizing x as they read it, the down product computing the
//     activation from their rows as it reads them and summing a token's
//     slots into x: four dispatches after the router's;
//   - in prompts (where mul_mm takes the dense products) moe_group lists
//     the pairs expert by expert in tiles of mul_mm's tokens, and
//     mul_mm_id_<type> decodes an expert's rows once for a tile's pairs;
//     moe_glu and moe_combine apply the activation and the sum;
//   - in decode passes of more tokens than mul_mv's tiles take (where the
//     dense products read each weight once for 8 tokens) moe_group lists
//     them in tiles of 8 pairs for mul_mv_idg_<type>, the down product
//     computing the activation as it reads the gate and up rows, and
//     moe_combine sums.
// Every dispatch's grid is fixed by the pass's tokens: the pass is
// recorded once and replayed, with no read-back of the routing.

import (
	"fmt"

	"inferno/arch"
)

// moeMaxTopK is moe_route.comp's MAXK: the most experts a token runs;
// moeMaxExperts moe_group.comp's MAXE, the most experts a layer has.
const (
	moeMaxTopK    = 32
	moeMaxExperts = 1024
)

// pushMulMVID is the push block of mul_mv_id_<type>
// (shaders/mul_mv_id.comp): with COMBINE 0, y[q*LDY + r] = sum_c
// W[ids[q]][r][c] * x_q[c] for rows r < Rows of one expert and pairs q <
// N; with COMBINE 1, the tokens' weighted sums of their K pairs' products
// (moe_combine's). x_q by XMODE: the row q/XDiv of X (xPlain), its
// RMSNorm times Gain (xNorm), or the activation of the pair's gate-and-up
// row (xGLU).
type pushMulMVID struct {
	W            uint64 // expert 0's row 0; expert e's row r at W + (e*Rows + r)*RowBytes
	X            uint64 // float32 rows, 16-byte aligned
	Y            uint64 // float32 outputs, item i's at Y + 4*i*LDY
	IDs          uint64 // the pairs' int32 expert ids
	Gain         uint64 // xNorm: Cols float32 gains
	Wts          uint64 // COMBINE 1: the pairs' gating weights
	GBias, UBias uint64 // xGLU with mvidGLUBias: Experts*Cols float32 each
	DBias        uint64 // mvidBias: Experts*Rows float32
	Rows         uint32 // rows of one expert's matrix
	Cols         uint32 // a multiple of weightBlock(type)
	N            uint32 // pairs (COMBINE 0) or tokens (COMBINE 1)
	RowBytes     uint32
	XDiv         uint32 // pairs a row of X serves (xPlain, xNorm)
	LDY          uint32
	Experts      uint32 // ids are clamped below it
	XStride      uint32 // xGLU: values from a pair's gate-and-up row to the next's
	Act          uint32 // xGLU: moeActs' code
	K            uint32 // COMBINE 1: pairs a token
	Flags        uint32 // mvidAdd, mvidBias, mvidGLUBias
	Eps          float32
}

// mul_mv_id's input modes (XMODE, its specialization constant 2) beside
// xPlain and xNorm: the activation of a pair's gate-and-up row.
const xGLU = 2

// mul_mv_id's flags.
const (
	mvidAdd     = 1 // add to y instead of storing
	mvidBias    = 2 // add each expert's bias of its rows (DBias)
	mvidGLUBias = 4 // xGLU: add the experts' gate and up biases first
)

// pushMulMMID is the push block of mul_mm_id_<type>
// (shaders/mul_mm_id.comp): mul_mv_id's product over moe_group's tiles.
type pushMulMMID struct {
	W        uint64 // expert 0's row 0; expert e's row r at W + (e*Rows + r)*RowBytes
	X        uint64 // float32 rows of Cols values, 16-byte aligned
	Y        uint64 // float32 outputs, pair q's at Y + 4*q*LDY
	Order    uint64 // the pairs grouped by expert (moe_group's)
	Tiles    uint64 // NTiles tiles (expert, first, pairs), int32
	Rows     uint32 // rows of one expert's matrix
	Cols     uint32 // a multiple of weightBlock(type)
	RowBytes uint32
	XDiv     uint32 // pairs a row of x serves
	LDY      uint32
	NTiles   uint32
	Experts  uint32 // experts are clamped below it
	_        [4]byte
}

// pushMulMVIDG is the push block of mul_mv_idg_<type>
// (shaders/mul_mv_idg.comp): mul_mv_id's product (COMBINE 0, no flags
// but mvidGLUBias) over moe_group's tiles of at most TOKENS pairs.
type pushMulMVIDG struct {
	W, X, Y               uint64 // as pushMulMVID's
	Order, Tiles          uint64 // moe_group's
	Gain, GBias, UBias    uint64 // as pushMulMVID's
	Rows, Cols, RowBytes  uint32
	XDiv, LDY, NTiles     uint32
	Experts, XStride, Act uint32
	Flags                 uint32 // mvidGLUBias
	Eps                   float32
	_                     [4]byte
}

// moeMVTile is mul_mv_idg's pairs a tile (its TOKENS): mul_mv's most
// tokens a workgroup.
const moeMVTile = 8

// pushMoEGroup is the push block of moe_group.comp.
type pushMoEGroup struct {
	IDs, Order, Tiles            uint64
	Pairs, Experts, Tile, NTiles uint32
}

// moeTileBound is the most tiles of at most tile pairs that pairs pairs
// of experts experts make, grouped by expert: the grid of mul_mm_id.
func moeTileBound(pairs, experts, tile int) int {
	return min(pairs, (pairs+tile-1)/tile+min(experts, pairs))
}

// routerMV records the router's logits of n tokens' rows x into y:
// mulMV, but a prompt's on mul_mm's float32 tiles whatever the router's
// format and the device, so that the router's own product adds no
// float16 rounding (mul_mm_cm's) to the choice of experts.
func (p *pass) routerMV(m *matrix, x, y uint64, n int) {
	if n >= moeMMMinTokens && p.sh.prompt {
		p.mulMMOn(m, x, y, n, false, 0, false)
		return
	}
	p.mulMV(m, x, y, n, false, 0)
}

// pushMoERoute is the push block of moe_route.comp.
type pushMoERoute struct {
	Logits, Bias, IDs, Wts uint64
	N, Experts, K, Flags   uint32 // Flags: moeRouteBias, moeRouteNorm
}

// moe_route's flags.
const (
	moeRouteBias = 1 // add the router's bias to the logits
	moeRouteNorm = 2 // the weights sum to one over the chosen experts
)

// pushMoEGLU is the push block of moe_glu.comp.
type pushMoEGLU struct {
	Out, GU, IDs, GBias, UBias              uint64
	N, Width, Stride, Act, HasBias, Experts uint32
}

// pushMoECombine is the push block of moe_combine.comp.
type pushMoECombine struct {
	X, Y, IDs, Wts, Bias         uint64
	N, Hidden, K, Flags, Experts uint32 // Flags: moeCombineAdd, moeCombineBias
	_                            [4]byte
}

// moe_combine's flags.
const (
	moeCombineAdd  = 1 // add the sum to x instead of storing it
	moeCombineBias = 2 // add each expert's down bias to its output
)

// checkMoE tells whether the shaders run c's mixture of experts.
func checkMoE(c *arch.Config) error {
	m := &c.MoE
	if !m.Enabled() {
		return nil
	}
	if m.TopK > moeMaxTopK {
		return fmt.Errorf("vulkan: %d experts a token: the Vulkan backend runs at most %d", m.TopK, moeMaxTopK)
	}
	if m.Experts > moeMaxExperts {
		return fmt.Errorf("vulkan: %d experts a layer: the Vulkan backend routes at most %d", m.Experts, moeMaxExperts)
	}
	if _, ok := moeActs[c.Act]; !ok {
		return fmt.Errorf("vulkan: no mixture of experts with the activation %v", c.Act)
	}
	return nil
}

// moeScratch is a runner's mixture-of-experts buffers for its scratch's
// tokens (cap x TopK pairs).
type moeScratch struct {
	logits *Buffer // router logits, tokens x Experts
	ids    *Buffer // per pair (token t's slot j at t*TopK + j): its expert, int32
	wts    *Buffer // and its gating weight
	gu     *Buffer // per pair: the gate and up products, 2 ExpertFFN
	act    *Buffer // per pair: their activation, ExpertFFN
	y      *Buffer // per pair: the expert's down product, Hidden
	order  *Buffer // grouped passes: the pairs grouped by expert (moe_group)
	tiles  *Buffer // and their tiles, 3 int32s each, at most pairs + Experts
}

// moeScratchValues is the float32s of a mixture of experts' scratch for n
// tokens of c: 0 for a dense model.
func moeScratchValues(c *arch.Config, n int) int64 {
	m := &c.MoE
	if !m.Enabled() {
		return 0
	}
	pairs := int64(n) * int64(m.TopK)
	return int64(n)*int64(m.Experts) + pairs*(6+3*int64(m.ExpertFFN)+int64(c.Hidden)) + 3*int64(m.Experts)
}

// alloc allocates s for n tokens of c (nothing for a dense model).
func (s *moeScratch) alloc(d *Device, c *arch.Config, n int) error {
	s.free()
	m := &c.MoE
	if !m.Enabled() {
		return nil
	}
	pairs := n * m.TopK
	var err error
	alloc := func(values int) *Buffer {
		if err != nil {
			return nil
		}
		var b *Buffer
		b, err = d.NewBuffer(4 * int64(values))
		return b
	}
	s.logits, s.ids, s.wts = alloc(n*m.Experts), alloc(pairs), alloc(pairs)
	s.gu, s.act, s.y = alloc(2*pairs*m.ExpertFFN), alloc(pairs*m.ExpertFFN), alloc(pairs*c.Hidden)
	s.order, s.tiles = alloc(pairs), alloc(3*(pairs+m.Experts))
	if err != nil {
		s.free()
		return fmt.Errorf("vulkan: mixture-of-experts scratch for %d tokens: %w", n, err)
	}
	return nil
}

// free releases s's buffers.
func (s *moeScratch) free() {
	for _, b := range []**Buffer{&s.logits, &s.ids, &s.wts, &s.gu, &s.act, &s.y, &s.order, &s.tiles} {
		(*b).Free()
		*b = nil
	}
}

// moe records layer l's OpMoE over the pass's tokens.
func (p *pass) moe(l *layer) {
	switch {
	case p.sh.prompt && p.sh.tokens >= moeMMMinTokens:
		p.moeGrouped(l, true)
	case !p.fuseInputs(): // decode batches: mul_mv's tiles of tokens
		p.moeGrouped(l, false)
	default:
		p.moePairs(l)
	}
}

// moePairs records layer l's OpMoE a (token, slot) pair a workgroup
// (mul_mv_id): the router's product and the gate and up products
// normalize x as they read it (the router's only in short passes, as
// mulMVIn's other products), the down product computes the activation as
// it reads the gate and up rows and sums each token's weighted experts
// into the residual stream.
func (p *pass) moePairs(l *layer) {
	r, c, n := p.r, p.c, p.sh.tokens
	mc := &c.MoE
	s := &r.moe
	x, h := r.x.Addr(), r.h.Addr()
	K, F, H := mc.TopK, mc.ExpertFFN, c.Hidden
	gain := l.vecs[arch.RoleFFNNorm]
	if p.fuseInputs() {
		p.mulMVIn(l.mats[arch.RoleRouter], xNorm, x, gain, s.logits.Addr(), n, false, 0)
	} else {
		p.rmsNorm(x, h, gain, n, H, 0, 0)
		p.rec.Barrier()
		p.routerMV(l.mats[arch.RoleRouter], h, s.logits.Addr(), n)
	}
	p.rec.Barrier()
	p.moeRoute(l, n)
	p.rec.Barrier()
	gu := s.gu.Addr()
	norm := pushMulMVID{X: x, Gain: gain.buf.Addr(), XDiv: uint32(K), LDY: uint32(2 * F), Eps: c.Eps}
	norm.Y = gu
	p.mulMVID(l.mats[arch.RoleExpertGate], xNorm, false, n*K, norm)
	norm.Y = gu + 4*uint64(F)
	p.mulMVID(l.mats[arch.RoleExpertUp], xNorm, false, n*K, norm)
	p.rec.Barrier()
	down := pushMulMVID{X: gu, Y: x, Wts: s.wts.Addr(), LDY: uint32(H), XStride: uint32(2 * F), Act: moeActs[c.Act], K: uint32(K), Flags: mvidAdd}
	if mc.Bias {
		down.GBias, down.UBias = l.vecs[arch.RoleExpertGateBias].buf.Addr(), l.vecs[arch.RoleExpertUpBias].buf.Addr()
		down.DBias, down.Flags = l.vecs[arch.RoleExpertDownBias].buf.Addr(), down.Flags|mvidGLUBias|mvidBias
	}
	if c.PostNorm {
		down.Y, down.Flags = r.out.Addr(), down.Flags&^mvidAdd
	}
	p.mulMVID(l.mats[arch.RoleExpertDown], xGLU, true, n, down)
	p.rec.Barrier()
	if c.PostNorm {
		p.moePostNorm(l)
	}
}

// moeGrouped records layer l's OpMoE over the pairs grouped by expert
// (moe_group): in prompts (mm) mul_mm_id's products and moe_glu's
// activation, in decode batches mul_mv_idg's tiles, the down product
// computing the activation as it reads the gate and up rows; then
// moe_combine's weighted sums.
func (p *pass) moeGrouped(l *layer, mm bool) {
	r, c, n := p.r, p.c, p.sh.tokens
	mc := &c.MoE
	s := &r.moe
	x, h := r.x.Addr(), r.h.Addr()
	K, F, H := mc.TopK, mc.ExpertFFN, c.Hidden
	pairs := n * K
	p.rmsNorm(x, h, l.vecs[arch.RoleFFNNorm], n, H, 0, 0)
	p.rec.Barrier()
	p.routerMV(l.mats[arch.RoleRouter], h, s.logits.Addr(), n)
	p.rec.Barrier()
	p.moeRoute(l, n)
	p.rec.Barrier()
	tile := moeMVTile
	if mm {
		tile = int(mulMMIDSpec(r.d, pairs, mc.Experts)[mmBN])
	}
	p.moeGroup(pairs, tile)
	p.rec.Barrier()
	gu := s.gu.Addr()
	if mm {
		p.mulMMID(l.mats[arch.RoleExpertGate], h, gu, pairs, K, 2*F)
		p.mulMMID(l.mats[arch.RoleExpertUp], h, gu+4*uint64(F), pairs, K, 2*F)
		p.rec.Barrier()
		p.moeGLU(l, pairs)
		p.rec.Barrier()
		p.mulMMID(l.mats[arch.RoleExpertDown], s.act.Addr(), s.y.Addr(), pairs, 1, H)
	} else {
		in := pushMulMVIDG{X: h, Y: gu, XDiv: uint32(K), LDY: uint32(2 * F)}
		p.mulMVIDG(l.mats[arch.RoleExpertGate], xPlain, pairs, in)
		in.Y = gu + 4*uint64(F)
		p.mulMVIDG(l.mats[arch.RoleExpertUp], xPlain, pairs, in)
		p.rec.Barrier()
		down := pushMulMVIDG{X: gu, Y: s.y.Addr(), XDiv: 1, LDY: uint32(H), XStride: uint32(2 * F), Act: moeActs[c.Act]}
		if mc.Bias {
			down.GBias, down.UBias = l.vecs[arch.RoleExpertGateBias].buf.Addr(), l.vecs[arch.RoleExpertUpBias].buf.Addr()
			down.Flags = mvidGLUBias
		}
		p.mulMVIDG(l.mats[arch.RoleExpertDown], xGLU, pairs, down)
	}
	p.rec.Barrier()
	if !c.PostNorm {
		p.moeCombine(l, x, n, true)
		p.rec.Barrier()
		return
	}
	p.moeCombine(l, r.out.Addr(), n, false)
	p.rec.Barrier()
	p.moePostNorm(l)
}

// moePostNorm records x += RMSNorm(out) * FFNPostNorm over the pass's
// tokens (Config.PostNorm), out holding the experts' sums.
func (p *pass) moePostNorm(l *layer) {
	r, n, H := p.r, p.sh.tokens, p.c.Hidden
	out := r.out.Addr()
	p.rmsNorm(out, out, l.vecs[arch.RoleFFNPostNorm], n, H, 0, 0)
	p.rec.Barrier()
	p.add(r.x.Addr(), out, n*H)
	p.rec.Barrier()
}

// moeRoute records moe_route over the router logits of n tokens.
func (p *pass) moeRoute(l *layer, n int) {
	pl := p.pipeline("moe_route", 64)
	if pl == nil {
		return
	}
	mc, s := &p.c.MoE, &p.r.moe
	push := pushMoERoute{Logits: s.logits.Addr(), Bias: s.logits.Addr(), IDs: s.ids.Addr(), Wts: s.wts.Addr(),
		N: uint32(n), Experts: uint32(mc.Experts), K: uint32(mc.TopK)}
	if mc.Bias {
		push.Bias, push.Flags = l.vecs[arch.RoleRouterBias].buf.Addr(), push.Flags|moeRouteBias
	}
	if mc.NormTopK || mc.Gating == arch.GateSoftmaxTopK {
		push.Flags |= moeRouteNorm
	}
	gx, gy := groups2D(n, 64)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// moeGroup records moe_group of the pass's pairs into tiles of at most
// tile pairs.
func (p *pass) moeGroup(pairs, tile int) {
	pl := p.pipeline("moe_group", 256)
	if pl == nil {
		return
	}
	mc, s := &p.c.MoE, &p.r.moe
	push := pushMoEGroup{IDs: s.ids.Addr(), Order: s.order.Addr(), Tiles: s.tiles.Addr(), Pairs: uint32(pairs),
		Experts: uint32(mc.Experts), Tile: uint32(tile), NTiles: uint32(moeTileBound(pairs, mc.Experts, tile))}
	p.rec.Dispatch(pl, 1, 1, 1, PushBytes(&push))
}

// mulMMID records y[q*ldy + r] = (W[ids[q]] x[q/xdiv])[r] for the pairs
// q < pairs over moe_group's tiles: m is a stack of the model's experts'
// matrices.
func (p *pass) mulMMID(m *matrix, x, y uint64, pairs, xdiv, ldy int) {
	E := p.c.MoE.Experts
	rows := m.rows / E
	spec := mulMMIDSpec(p.r.d, pairs, E)
	pl := p.pipeline("mul_mm_id_"+weightTypes[m.typ], spec[:]...)
	if pl == nil {
		return
	}
	nt := moeTileBound(pairs, E, int(spec[mmBN]))
	push := pushMulMMID{W: m.buf.Addr(), X: x, Y: y, Order: p.r.moe.order.Addr(), Tiles: p.r.moe.tiles.Addr(), Rows: uint32(rows),
		Cols: uint32(m.cols), RowBytes: uint32(m.rb), XDiv: uint32(xdiv), LDY: uint32(ldy), NTiles: uint32(nt), Experts: uint32(E)}
	p.rec.Dispatch(pl, groups(rows, int(spec[mmBM])), groups(nt, 1), 1, PushBytes(&push))
}

// mulMMIDSpec returns mul_mm_id's specialization constants for pairs
// pairs of experts experts on d: mulMMSpec's, with the pairs a tile (BN)
// and the invocations halved, down to 16 pairs, while an expert's tile
// would be less than half full on average (Qwen3-30B-A3B's prompt of 512
// tokens gives its 128 experts 32 pairs each; gpt-oss-20b's 32 experts
// 64), so that fewer of the tiles' products are of empty columns. Each
// output's sum runs over the same values in the same order whatever BN.
func mulMMIDSpec(d *Device, pairs, experts int) [6]uint32 {
	s := mulMMSpec(d.SubgroupSize, d.SharedMemory)
	avg := (pairs + experts - 1) / max(experts, 1)
	for s[mmBN] > 16 && int(s[mmBN])/2 >= avg && s[mmLocal]/2 >= max(d.SubgroupSize, 1) {
		s[mmBN] /= 2
		s[mmLocal] /= 2
	}
	return s
}

// mulMVID records mul_mv_id of the expert stack m with input mode mode
// (xPlain, xNorm, xGLU) over n items: pairs, or with combine tokens (each
// token's pairs weighted and summed). push holds the inputs, outputs and
// options; the matrix's fields, the ids and n are set here.
func (p *pass) mulMVID(m *matrix, mode uint32, combine bool, n int, push pushMulMVID) {
	E := p.c.MoE.Experts
	rows := m.rows / E
	name := "mul_mv_id_" + weightTypes[m.typ]
	spec := mulMVSpecRows(p.r.d.SubgroupSize, rows, 1)
	comb := uint32(0)
	if combine {
		comb = 1
	}
	pl := p.pipeline(name, spec[0], spec[1], mode, comb)
	if pl == nil {
		return
	}
	push.W, push.IDs, push.Rows, push.Cols, push.N = m.buf.Addr(), p.r.moe.ids.Addr(), uint32(rows), uint32(m.cols), uint32(n)
	push.RowBytes, push.Experts = uint32(m.rb), uint32(E)
	if push.XDiv == 0 {
		push.XDiv = 1
	}
	// Unread addresses point at a buffer of the pass (never dereferenced).
	for _, a := range []*uint64{&push.Gain, &push.Wts, &push.GBias, &push.UBias, &push.DBias} {
		if *a == 0 {
			*a = push.IDs
		}
	}
	gx, gy := mulMVIDGroups(rows, n, spec[1])
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// mulMVIDG records mul_mv_idg of the expert stack m with input mode mode
// (xPlain, xNorm, xGLU) over moe_group's tiles of moeMVTile pairs. push
// holds the inputs, outputs and options; the matrix's fields and the
// tiles are set here.
func (p *pass) mulMVIDG(m *matrix, mode uint32, pairs int, push pushMulMVIDG) {
	E := p.c.MoE.Experts
	rows := m.rows / E
	spec := mulMVSpecRows(p.r.d.SubgroupSize, rows, moeMVTile)
	pl := p.pipeline("mul_mv_idg_"+weightTypes[m.typ], spec[0], spec[1], mode, moeMVTile)
	if pl == nil {
		return
	}
	s := &p.r.moe
	nt := moeTileBound(pairs, E, moeMVTile)
	push.W, push.Order, push.Tiles, push.Rows, push.Cols = m.buf.Addr(), s.order.Addr(), s.tiles.Addr(), uint32(rows), uint32(m.cols)
	push.RowBytes, push.NTiles, push.Experts = uint32(m.rb), uint32(nt), uint32(E)
	// Unread addresses point at a buffer of the pass (never dereferenced).
	for _, a := range []*uint64{&push.Gain, &push.GBias, &push.UBias} {
		if *a == 0 {
			*a = push.Order
		}
	}
	p.rec.Dispatch(pl, groups(rows, int(spec[1])), groups(nt, 1), 1, PushBytes(&push))
}

// mulMVIDGroups returns the grid of a mul_mv_id dispatch of rows rows an
// expert, n items (pairs or tokens) and rpw rows a workgroup:
// ceil(rows/rpw) by n, each clamped to maxGroups (the workgroups stride
// over the rest).
func mulMVIDGroups(rows, n int, rpw uint32) (x, y uint32) {
	return groups(rows, int(rpw)), groups(n, 1)
}

// moeActs are moe_glu's activations by arch.Activation.
var moeActs = map[arch.Activation]uint32{arch.SwiGLU: 0, arch.SwiGLUOAI: 1, arch.GeGLU: 2}

// moeGLU records moe_glu over the pairs' gate and up products.
func (p *pass) moeGLU(l *layer, pairs int) {
	pl := p.pipeline("moe_glu", elementWG)
	if pl == nil {
		return
	}
	mc, s := &p.c.MoE, &p.r.moe
	F := mc.ExpertFFN
	push := pushMoEGLU{Out: s.act.Addr(), GU: s.gu.Addr(), IDs: s.ids.Addr(), GBias: s.gu.Addr(), UBias: s.gu.Addr(),
		N: uint32(pairs * F), Width: uint32(F), Stride: uint32(2 * F), Act: moeActs[p.c.Act], Experts: uint32(mc.Experts)}
	if mc.Bias {
		push.GBias, push.UBias, push.HasBias = l.vecs[arch.RoleExpertGateBias].buf.Addr(), l.vecs[arch.RoleExpertUpBias].buf.Addr(), 1
	}
	gx, gy := groups2D(pairs*F, elementWG)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}

// moeCombine records moe_combine of n tokens' down products into out
// (added to it with add).
func (p *pass) moeCombine(l *layer, out uint64, n int, add bool) {
	pl := p.pipeline("moe_combine", elementWG)
	if pl == nil {
		return
	}
	mc, s, H := &p.c.MoE, &p.r.moe, p.c.Hidden
	push := pushMoECombine{X: out, Y: s.y.Addr(), IDs: s.ids.Addr(), Wts: s.wts.Addr(), Bias: s.y.Addr(),
		N: uint32(n * H), Hidden: uint32(H), K: uint32(mc.TopK), Experts: uint32(mc.Experts)}
	if add {
		push.Flags |= moeCombineAdd
	}
	if mc.Bias {
		push.Bias, push.Flags = l.vecs[arch.RoleExpertDownBias].buf.Addr(), push.Flags|moeCombineBias
	}
	gx, gy := groups2D(n*H, elementWG)
	p.rec.Dispatch(pl, gx, gy, 1, PushBytes(&push))
}
