package qwen3

import "fmt"

// An Op is one operation of Qwen3's forward pass, at the granularity the
// backends fuse their kernels: each reads the residual stream or the
// previous operation's output and writes the next one's input.
type Op uint8

// The operations of a layer, in the order a forward pass runs them. For a
// batch of n tokens, x is the residual stream (n x Hidden), q, k and v
// the projections, att the attention output and act the feed-forward
// activation.
const (
	// OpQKV: h = RMSNorm(x) * AttnNorm; q, k, v = Q h, K h, V h.
	OpQKV Op = iota
	// OpAttention: q = RMSNorm(q) * QNorm and k = RMSNorm(k) * KNorm per
	// head, both rotated (RoPE) at each token's position; k and v stored
	// in the token's sequence's KV blocks; att = causal grouped-query
	// attention of each token over its sequence's positions.
	OpAttention
	// OpOut: x += O att.
	OpOut
	// OpGateUp: h = RMSNorm(x) * FFNNorm; act = silu(Gate h) * (Up h).
	OpGateUp
	// OpDown: x += Down act.
	OpDown
)

// String names the operation.
func (o Op) String() string {
	switch o {
	case OpQKV:
		return "qkv"
	case OpAttention:
		return "attention"
	case OpOut:
		return "out"
	case OpGateUp:
		return "gate_up"
	case OpDown:
		return "down"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// A Step is an operation of one layer.
type Step struct {
	Op    Op
	Layer int
}

// layerOps are the operations of every layer, in order.
var layerOps = [...]Op{OpQKV, OpAttention, OpOut, OpGateUp, OpDown}

// Plan returns the steps of a forward pass through the layers, in order:
// the sequence of fused operations every backend executes (the CPU's
// forward pass in this package, the GPU's decode graphs, prefill and
// batches in backend/cuda). Before them the tokens' embedding rows are the
// residual stream; after them the output rows are normalized (OutputNorm)
// and multiplied by the head (Output). The slice is shared: do not modify
// it.
func (m *Model) Plan() []Step { return m.plan }

// makePlan returns the steps of a model of layers layers.
func makePlan(layers int) []Step {
	plan := make([]Step, 0, layers*len(layerOps))
	for i := range layers {
		for _, op := range layerOps {
			plan = append(plan, Step{Op: op, Layer: i})
		}
	}
	return plan
}
