package arch

import "fmt"

// A Role is what a weight tensor is for: the token embedding, a layer's
// query projection, its K-norm gains, and so on. Backends find weights by
// role and layer (Weights), model packages name the tensors of their files
// by role (Role.Tensor gives llama.cpp's GGUF names).
type Role uint8

// The roles. Matrices are rows x cols (Shape); vectors have one dimension.
const (
	RoleEmbed      Role = iota // token_embd: Vocab x Hidden
	RoleOutputNorm             // output_norm: Hidden
	RoleOutput                 // output: Vocab x Hidden (the embedding when tied)

	RoleAttnNorm   // attn_norm: Hidden
	RoleQ          // attn_q: QDim x Hidden
	RoleK          // attn_k: KVDim x Hidden
	RoleV          // attn_v: KVDim x Hidden
	RoleQBias      // attn_q bias: QDim
	RoleKBias      // attn_k bias: KVDim
	RoleVBias      // attn_v bias: KVDim
	RoleQNorm      // attn_q_norm: HeadDim, one gain per value of a head
	RoleKNorm      // attn_k_norm: HeadDim
	RoleO          // attn_output: Hidden x QDim
	RoleFFNNorm    // ffn_norm: Hidden
	RoleGate       // ffn_gate: FFN x Hidden
	RoleUp         // ffn_up: FFN x Hidden
	RoleDown       // ffn_down: Hidden x FFN
	RoleRouter     // ffn_gate_inp: Experts x Hidden
	RoleExpertGate // ffn_gate_exps: Experts stacked ExpertFFN x Hidden
	RoleExpertUp   // ffn_up_exps: Experts stacked ExpertFFN x Hidden
	RoleExpertDown // ffn_down_exps: Experts stacked Hidden x ExpertFFN

	RoleOBias          // attn_output bias: Hidden (Config.OutBias)
	RoleAttnPostNorm   // post_attention_norm: Hidden (Config.PostNorm)
	RoleFFNPostNorm    // post_ffw_norm: Hidden (Config.PostNorm)
	RoleSinks          // attn_sinks: Heads, a logit a query head (Config.Sinks)
	RoleRouterBias     // ffn_gate_inp bias: Experts (MoE.Bias)
	RoleExpertGateBias // ffn_gate_exps bias: Experts stacked ExpertFFN, one vector
	RoleExpertUpBias   // ffn_up_exps bias: Experts stacked ExpertFFN, one vector
	RoleExpertDownBias // ffn_down_exps bias: Experts stacked Hidden, one vector

	numRoles
)

// roleInfo: a role's GGUF base name, whether it is a bias (".bias", else
// ".weight"), whether it belongs to a layer (blk.N.) and its
// dimensionality.
var roleInfo = [numRoles]struct {
	name  string
	bias  bool
	layer bool
	dims  int // 1: vector (a stack of experts' vectors too), 2: matrix, 3: a stack of experts' matrices
}{
	RoleEmbed:      {"token_embd", false, false, 2},
	RoleOutputNorm: {"output_norm", false, false, 1},
	RoleOutput:     {"output", false, false, 2},
	RoleAttnNorm:   {"attn_norm", false, true, 1},
	RoleQ:          {"attn_q", false, true, 2},
	RoleK:          {"attn_k", false, true, 2},
	RoleV:          {"attn_v", false, true, 2},
	RoleQBias:      {"attn_q", true, true, 1},
	RoleKBias:      {"attn_k", true, true, 1},
	RoleVBias:      {"attn_v", true, true, 1},
	RoleQNorm:      {"attn_q_norm", false, true, 1},
	RoleKNorm:      {"attn_k_norm", false, true, 1},
	RoleO:          {"attn_output", false, true, 2},
	RoleFFNNorm:    {"ffn_norm", false, true, 1},
	RoleGate:       {"ffn_gate", false, true, 2},
	RoleUp:         {"ffn_up", false, true, 2},
	RoleDown:       {"ffn_down", false, true, 2},
	RoleRouter:     {"ffn_gate_inp", false, true, 2},
	RoleExpertGate: {"ffn_gate_exps", false, true, 3},
	RoleExpertUp:   {"ffn_up_exps", false, true, 3},
	RoleExpertDown: {"ffn_down_exps", false, true, 3},

	RoleOBias:          {"attn_output", true, true, 1},
	RoleAttnPostNorm:   {"post_attention_norm", false, true, 1},
	RoleFFNPostNorm:    {"post_ffw_norm", false, true, 1},
	RoleSinks:          {"attn_sinks", false, true, 1},
	RoleRouterBias:     {"ffn_gate_inp", true, true, 1},
	RoleExpertGateBias: {"ffn_gate_exps", true, true, 1},
	RoleExpertUpBias:   {"ffn_up_exps", true, true, 1},
	RoleExpertDownBias: {"ffn_down_exps", true, true, 1},
}

// String names the role by its GGUF base name, with "_bias" for a bias.
func (r Role) String() string {
	if r >= numRoles {
		return fmt.Sprintf("Role(%d)", uint8(r))
	}
	if roleInfo[r].bias {
		return roleInfo[r].name + "_bias"
	}
	return roleInfo[r].name
}

// PerLayer reports whether each layer has its own tensor of role r.
func (r Role) PerLayer() bool { return r < numRoles && roleInfo[r].layer }

// Vector reports whether role r's tensor is a vector (a norm's gains or a
// bias; the experts' biases, a vector an expert, stacked into one), read
// as float32 values; otherwise it is a matrix.
func (r Role) Vector() bool { return r < numRoles && roleInfo[r].dims == 1 }

// Tensor returns the GGUF name of role r's tensor in layer i (ignored for
// the roles outside layers): "blk.3.attn_q.weight", "output_norm.weight".
func (r Role) Tensor(i int) string {
	if r >= numRoles {
		return r.String()
	}
	return r.tensorNamed(roleInfo[r].name, i)
}

// tensorNamed is Tensor with the base name name.
func (r Role) tensorNamed(name string, i int) string {
	ri := &roleInfo[r]
	suffix := ".weight"
	if ri.bias {
		suffix = ".bias"
	}
	if ri.layer {
		return fmt.Sprintf("blk.%d.%s%s", i, name, suffix)
	}
	return name + suffix
}

// Shape returns the dimensions of role r's tensor in a model of c as
// rows, cols and experts: a vector has rows values (cols 1), a matrix rows
// x cols, an expert stack experts matrices of rows x cols (GGUF lists the
// dimensions innermost first: [cols rows experts]). experts is 1 but for
// the stacks; a stack of experts' vectors has experts vectors of rows
// values (GGUF: [rows experts]), loaded as one vector.
func (c *Config) Shape(r Role) (rows, cols, experts int) {
	h, e := c.Hidden, max(c.MoE.Experts, 1)
	switch r {
	case RoleEmbed, RoleOutput:
		return c.Vocab, h, 1
	case RoleOutputNorm, RoleAttnNorm, RoleFFNNorm, RoleOBias, RoleAttnPostNorm, RoleFFNPostNorm:
		return h, 1, 1
	case RoleSinks:
		return c.Heads, 1, 1
	case RoleRouterBias:
		return c.MoE.Experts, 1, 1
	case RoleExpertGateBias, RoleExpertUpBias:
		return c.MoE.ExpertFFN, 1, e
	case RoleExpertDownBias:
		return h, 1, e
	case RoleQ:
		return c.QDim(), h, 1
	case RoleK, RoleV:
		return c.KVDim(), h, 1
	case RoleQBias:
		return c.QDim(), 1, 1
	case RoleKBias, RoleVBias:
		return c.KVDim(), 1, 1
	case RoleQNorm, RoleKNorm:
		return c.HeadDim, 1, 1
	case RoleO:
		return h, c.QDim(), 1
	case RoleGate, RoleUp:
		return c.FFN, h, 1
	case RoleDown:
		return h, c.FFN, 1
	case RoleRouter:
		return c.MoE.Experts, h, 1
	case RoleExpertGate, RoleExpertUp:
		return c.MoE.ExpertFFN, h, e
	case RoleExpertDown:
		return h, c.MoE.ExpertFFN, e
	}
	return 0, 0, 0
}
