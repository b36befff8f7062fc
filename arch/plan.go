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
	// RMSNorm(k) * KNorm per head; both rotated (Config.Rope) at each
	// token's position; k and v stored in the token's sequence's KV
	// blocks; att = causal grouped-query attention of each token over its
	// sequence's positions.
	OpAttention
	// OpOut: x += O att.
	OpOut
	// OpGateUp: h = RMSNorm(x) * FFNNorm; act = Act(Gate h) * (Up h).
	OpGateUp
	// OpDown: x += Down act.
	OpDown
	// OpMoE: h = RMSNorm(x) * FFNNorm; the router (Router h) picks each
	// token's experts (Config.MoE); x += the weighted sum of their
	// ExpertDown (Act(ExpertGate h) * (ExpertUp h)). It replaces OpGateUp
	// and OpDown in a mixture-of-experts layer.
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
		if c.QKNorm {
			return []Role{RoleQNorm, RoleKNorm}
		}
		return nil
	case OpOut:
		return []Role{RoleO}
	case OpGateUp:
		return []Role{RoleFFNNorm, RoleGate, RoleUp}
	case OpDown:
		return []Role{RoleDown}
	case OpMoE:
		return []Role{RoleFFNNorm, RoleRouter, RoleExpertGate, RoleExpertUp, RoleExpertDown}
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
