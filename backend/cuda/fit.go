package cuda

import (
	"fmt"

	"inferno/arch"
	"inferno/backend"
	"inferno/gguf"
)

// footprint is the device memory a Model and one batched runner need,
// estimated from the model before anything is allocated.
type footprint struct {
	weights, kvPerPos, kv, scratch int64
	positions                      int // the KV pool's positions counted in kv
	// windowKV is the part of kv in a window pool (a model with
	// sliding-window layers and others): those layers' keys and values of
	// the positions a pass sees, at most Window+MaxBatch; kvPerPos then
	// counts the other layers only.
	windowKV int64
}

func (f footprint) total() int64 { return f.weights + f.kv + f.scratch }

// gpuMatrixBytes is the device memory a matrix of rows x cols takes once
// uploaded: Q8_0's layout (int8 values with rows padded to a multiple of
// 64, f16 scales twice: row- and block-major); other formats are counted
// at their file size plus an eighth (their own layouts: quant*.go).
func gpuMatrixBytes(t gguf.TensorType, rows, cols int, fileBytes int64) int64 {
	if t == gguf.TensorQ8_0 {
		mpad, nb := int64(roundUp(rows, 64)), int64(cols/32)
		return mpad*int64(cols) + int64(rows)*nb*2 + nb*mpad*2
	}
	return fileBytes + fileBytes/8 + int64(64*cols)
}

func weightBytes(w *backend.Weight) int64 {
	return gpuMatrixBytes(w.Type, w.Rows, w.Cols, int64(len(w.Data)))
}

// estimateFootprint returns what a Model of md and one batched runner
// with a KV pool of positions positions hold on the device.
func estimateFootprint(md arch.Model, positions int) footprint {
	c, m := md.Hyper(), md.Tensors()
	var f footprint
	f.weights = weightBytes(m.Embed) + 4*int64(c.Hidden)
	if m.Output != m.Embed {
		f.weights += weightBytes(m.Output)
	}
	qkvRows := c.QDim() + 2*c.KVDim()
	for i := range m.Layers {
		mat := m.Layers[i].Matrix
		q := mat(arch.RoleQ)
		qkvFile := int64(len(q.Data) + len(mat(arch.RoleK).Data) + len(mat(arch.RoleV).Data))
		f.weights += gpuMatrixBytes(q.Type, qkvRows, c.Hidden, qkvFile) + weightBytes(mat(arch.RoleO)) + 4*int64(2*c.Hidden+2*c.HeadDim) +
			4*int64(c.Heads+3*c.Hidden) // sinks, output bias, post-norms (at most)
		if c.MoE.Enabled() {
			E := int64(c.MoE.Experts)
			gate, up := mat(arch.RoleExpertGate), mat(arch.RoleExpertUp)
			f.weights += weightBytes(mat(arch.RoleRouter)) + weightBytes(mat(arch.RoleExpertDown)) +
				gpuMatrixBytes(gate.Type, c.MoE.Experts*gateUpRows(c.MoE.ExpertFFN), c.Hidden, int64(len(gate.Data)+len(up.Data)))
			if c.MoE.Bias {
				f.weights += 4 * E * int64(1+gateUpRows(c.MoE.ExpertFFN)+c.Hidden)
			}
			continue
		}
		gate, up := mat(arch.RoleGate), mat(arch.RoleUp)
		f.weights += gpuMatrixBytes(gate.Type, gateUpRows(c.FFN), c.Hidden, int64(len(gate.Data)+len(up.Data))) +
			weightBytes(mat(arch.RoleDown))
	}
	main, _ := poolLayers(c)
	local := c.Layers - main
	f.kvPerPos = int64(2 * 2 * (c.Layers - local) * c.KVDim()) // f16 keys and values
	f.positions = positions
	f.windowKV = int64(2*2*local*c.KVDim()) * int64(min(positions, c.Window+MaxBatch))
	f.kv = f.kvPerPos*int64(positions) + f.windowKV
	tables := int64(1) // the RoPE tables: the global layers', the local layers' own
	if c.Window > 0 && c.LocalRope.Theta != 0 {
		tables = 2
	}
	f.scratch = batchScratchBytes(c, splitsK(md)) + tables*4*int64(c.HeadDim)*int64(positions)
	return f
}

// batchScratchBytes estimates a batched runner's scratch (BatchRunner.
// allocScratch): the activations of MaxBatch tokens, their logits, the
// attention partials, the split products' workspace where some product
// may split (split: splitsK), and a margin for the graphs, the sampler's
// buffers and the inputs.
func batchScratchBytes(c *arch.Config, split bool) int64 {
	np := int64(roundUp(MaxBatch, 64))
	maxK := int64(max(c.Hidden, c.QDim(), c.FFN))
	qkvRows := int64(c.QDim() + 2*c.KVDim())
	var ws int64
	if split {
		ws = mmhSplitMost * (mmhSplitBytes + 4) // workspace and counts
	}
	return 4*np*(2*int64(c.Hidden)+qkvRows+2*int64(c.QDim())+int64(c.FFN)) + // residual, qkv, queries, attention, ffn, output rows
		np*maxK*(2+2) + 4*np*maxK/32 + // activation planes, interleaved activations, scales
		ws +
		4*MaxBatch*int64(c.Vocab) + // logits
		4*2*MaxBatch*int64(c.Heads)*int64(c.HeadDim+2) + // attention partials
		128<<20 + // graphs, the sampler, inputs and the rest
		moeScratchBytes(c) + rawScratchBytes(c)
}

// splitsK reports whether some product of md may take mmh's b128 tiles,
// and so split K (quantSetup's mmhTiles, from the tensors' types before
// the upload): a matrix in a block format other than Q8_0 in its own
// layout (q8hFor).
func splitsK(md arch.Model) bool {
	c := md.Hyper()
	for _, w := range md.Tensors().Matrices() {
		if f := formatOf(w.Type); f != nil && !f.float && (w.Type != gguf.TensorQ8_0 || q8hFor(c)) {
			return true
		}
	}
	return false
}

// rawScratchBytes is the raw gate/up products' buffer a dense model whose
// activation is not SwiGLU may need (options.go: Q8_0's own kernels).
func rawScratchBytes(c *arch.Config) int64 {
	if c.MoE.Enabled() || c.Act == arch.SwiGLU {
		return 0
	}
	return 4 * int64(roundUp(MaxBatch, 64)) * int64(gateUpRows(c.FFN))
}

func gib(n int64) float64 { return float64(n) / (1 << 30) }

// checkFit fails, in one line, when the model's weights, a batched
// runner's scratch and a KV pool of one sequence of MaxLen positions do
// not fit in the device's free memory.
func (r *Model) checkFit() error {
	free, err := r.dev.freeMemory()
	if err != nil {
		return err
	}
	return fitError(estimateFootprint(r.m, r.maxLen), free, r.dev.Name)
}

// fitError says, in one line, how much memory the footprint f needs and how
// much the device (named name) has free, and when the weights fit, what
// context would; nil when it fits.
func fitError(f footprint, free uint64, name string) error {
	avail := int64(free) - int64(free)/50 // 2% for the driver's own allocations
	if f.total() <= avail {
		return nil
	}
	hint := ""
	if rest := avail - f.weights - f.scratch - f.windowKV; rest > 0 {
		if n := rest / f.kvPerPos / 256 * 256; n >= 256 {
			hint = fmt.Sprintf("; a context of %d positions would fit (--ctx %d)", n, n)
		}
	}
	kv := ""
	if f.windowKV > 0 {
		kv = fmt.Sprintf(" (its window pool %.1f)", gib(f.windowKV))
	}
	return fmt.Errorf("cuda: the model needs %.1f GiB of GPU memory (weights %.1f, KV pool of %d positions %.1f%s, scratch %.1f), %s has %.1f GiB free%s",
		gib(f.total()), gib(f.weights), f.positions, gib(f.kv), kv, gib(f.scratch), name, gib(int64(free)), hint)
}

// checkFit fails, in one line, when a pool of blocks blocks (and the
// scratch block), for a model with sliding-window layers a window pool of
// localBlocks blocks (and its scratch block), and the runner's scratch do
// not fit in the device's free memory.
func (br *BatchRunner) checkFit(blocks, localBlocks int) error {
	free, total, err := br.dev.memoryInfo()
	if err != nil {
		return err
	}
	o := &br.base.opts
	left := min(free-free/50, budgetLeft(free, total, br.dev.inUse, o.Memory, o.MemoryBytes))
	pool := int64(blocks+1) * int64(br.blockBytes())
	var window int64
	if br.win {
		window = int64(localBlocks+1) * int64(br.localBlockBytes())
	}
	scratch := batchScratchBytes(&br.cfg, br.base.mmhTiles)
	if pool+window+scratch <= int64(left) {
		return nil
	}
	if br.win {
		return fmt.Errorf("cuda: a KV pool of %d blocks of %d positions needs %.1f GiB of GPU memory, its window pool of %d blocks %.1f and the batch scratch %.1f; %s has %.1f GiB free, %.1f of them within the GPU memory budget (--gpu-memory)",
			blocks, br.bs, gib(pool), localBlocks, gib(window), gib(scratch), br.dev.Name, gib(int64(free)), gib(int64(left)))
	}
	return fmt.Errorf("cuda: a KV pool of %d blocks of %d positions needs %.1f GiB of GPU memory and the batch scratch %.1f; %s has %.1f GiB free, %.1f of them within the GPU memory budget (--gpu-memory)",
		blocks, br.bs, gib(pool), gib(scratch), br.dev.Name, gib(int64(free)), gib(int64(left)))
}
