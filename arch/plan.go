package arch

// An Op is one operation of a forward pass, at the granularity the
// backends fuse their kernels: each reads the residual stream or the
// previous operation's output and writes the next one's input. What an
// operation computes beyond its core (a bias, QK-norm, the RoPE style, the
// activation) is the Config's options.
type Op uint8

// The operations of a layer. For a batch of n tokens, x is the residual
// stream (n x Hidden), q, k and v the projections, att the attention output
// and act the feed-forward activation.
const (
	// OpQKV: h = RMSNorm(x) * AttnNorm; q, k, v = Q h, K h, V h, plus
	// their biases with Config.Bias.
	OpQKV Op = iota
	// OpAttention: with Config.QKNorm q = RMSNorm(q) * QNorm and k =
	// RMSNorm(k) * KNorm per head; both rotated (Config.LayerRope, on
	// Config.RotaryDims values a head) at each token's position; k and v
	// stored in the token's sequence's KV blocks; att = causal
	// grouped-query attention of each token over its sequence's positions
	// (the last Config.LayerWindow of them on a local layer), logits
	// scaled by Config.AttentionScale, with Sinks' logits in the softmax.
	OpAttention
	// OpOut: o = O att (+ OBias with Config.OutBias); x += o, or x +=
	// RMSNorm(o) * AttnPostNorm with Config.PostNorm.
	OpOut
	// OpGateUp: h = RMSNorm(x) * FFNNorm; act = Act(Gate h) * (Up h).
	OpGateUp
	// OpDown: d = Down act; x += d, or x += RMSNorm(d) * FFNPostNorm with
	// Config.PostNorm.
	OpDown
	// OpMoE: h = RMSNorm(x) * FFNNorm; the router (Router h, + RouterBias
	// with MoE.Bias) picks each token's experts (Config.MoE); d = the
	// weighted sum of their ExpertDown (Act(ExpertGate h) * (ExpertUp h))
	// (each product + its expert's bias with MoE.Bias); x += d, or with
	// Config.PostNorm RMSNorm(d) * FFNPostNorm. It replaces OpGateUp and
	// OpDown in a mixture-of-experts layer.
	OpMoE
)

var opNames = [...]string{OpQKV: "qkv", OpAttention: "attention", OpOut: "out", OpGateUp: "gate_up", OpDown: "down", OpMoE: "moe"}

// String names the operation.
func (o Op) String() string { return enumString(o, "Op", opNames[:]) }

// A Step is an operation of one layer.
type Step struct {
	Op    Op
	Layer int
}

var (
	denseOps = [...]Op{OpQKV, OpAttention, OpOut, OpGateUp, OpDown}
	moeOps   = [...]Op{OpQKV, OpAttention, OpOut, OpMoE}
)

// layerOps returns the operations of a layer of c, in order.
func (c *Config) layerOps() []Op {
	if c.MoE.Enabled() {
		return moeOps[:]
	}
	return denseOps[:]
}

// NewPlan returns the steps of a forward pass of c through its layers, in
// order: the sequence of fused operations every backend executes. Before
// them the tokens' embedding rows are the residual stream; after them the
// output rows are normalized (RoleOutputNorm) and multiplied by the head
// (RoleOutput).
func NewPlan(c *Config) []Step {
	ops := c.layerOps()
	plan := make([]Step, 0, c.Layers*len(ops))
	for i := range c.Layers {
		for _, op := range ops {
			plan = append(plan, Step{Op: op, Layer: i})
		}
	}
	return plan
}

// Roles returns the weights operation o reads in a layer of c, in order.
func (c *Config) Roles(o Op) []Role {
	switch o {
	case OpQKV:
		if c.Bias {
			return []Role{RoleAttnNorm, RoleQ, RoleK, RoleV, RoleQBias, RoleKBias, RoleVBias}
		}
		return []Role{RoleAttnNorm, RoleQ, RoleK, RoleV}
	case OpAttention:
		var rs []Role
		if c.QKNorm {
			rs = append(rs, RoleQNorm, RoleKNorm)
		}
		if c.Sinks {
			rs = append(rs, RoleSinks)
		}
		return rs
	case OpOut:
		rs := []Role{RoleO}
		if c.OutBias {
			rs = append(rs, RoleOBias)
		}
		if c.PostNorm {
			rs = append(rs, RoleAttnPostNorm)
		}
		return rs
	case OpGateUp:
		return []Role{RoleFFNNorm, RoleGate, RoleUp}
	case OpDown:
		if c.PostNorm {
			return []Role{RoleDown, RoleFFNPostNorm}
		}
		return []Role{RoleDown}
	case OpMoE:
		rs := []Role{RoleFFNNorm, RoleRouter, RoleExpertGate, RoleExpertUp, RoleExpertDown}
		if c.MoE.Bias {
			rs = append(rs, RoleRouterBias, RoleExpertGateBias, RoleExpertUpBias, RoleExpertDownBias)
		}
		if c.PostNorm {
			rs = append(rs, RoleFFNPostNorm)
		}
		return rs
	}
	return nil
}

// LayerRoles returns every weight a layer of c has: those its plan's
// operations read, in order.
func (c *Config) LayerRoles() []Role {
	var rs []Role
	for _, o := range c.layerOps() {
		rs = append(rs, c.Roles(o)...)
	}
	return rs
}
