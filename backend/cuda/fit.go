package cuda

import (
	"fmt"

	"inferno/arch"
	"inferno/backend"
	"inferno/gguf"
)

// footprint is the device memory a Runner needs, estimated from the model
// before anything is allocated.
type footprint struct {
	weights, kvPerPos, kv, scratch int64
	positions                      int // the KV cache's positions counted in kv
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

// estimateFootprint returns what a Runner of m with a KV cache of maxLen
// positions and prefill chunks of chunk tokens holds on the device.
func estimateFootprint(md arch.Model, maxLen, chunk int) footprint {
	c, m := md.Hyper(), md.Tensors()
	var f footprint
	f.weights = weightBytes(m.Embed) + 4*int64(c.Hidden)
	if m.Output != m.Embed {
		f.weights += weightBytes(m.Output)
	}
	qkvRows := c.QDim() + 2*c.KVDim()
	for i := range m.Layers {
		mat := m.Layers[i].Matrix
		q, gate, up := mat(arch.RoleQ), mat(arch.RoleGate), mat(arch.RoleUp)
		qkvFile := int64(len(q.Data) + len(mat(arch.RoleK).Data) + len(mat(arch.RoleV).Data))
		f.weights += gpuMatrixBytes(q.Type, qkvRows, c.Hidden, qkvFile) + weightBytes(mat(arch.RoleO)) +
			gpuMatrixBytes(gate.Type, gateUpRows(c.FFN), c.Hidden, int64(len(gate.Data)+len(up.Data))) +
			weightBytes(mat(arch.RoleDown)) + 4*int64(2*c.Hidden+2*c.HeadDim)
	}
	f.kvPerPos = int64(2 * 2 * c.Layers * c.KVDim()) // f16 keys and values
	f.positions = maxLen
	f.kv = f.kvPerPos * int64(maxLen)
	np := int64(roundUp(chunk, 64))
	maxK := int64(max(c.Hidden, c.QDim(), c.FFN))
	f.scratch = 4*np*int64(c.Hidden+qkvRows+2*c.QDim()+c.FFN) + 2*np*maxK + 4*np*maxK/32 + // prefill
		2*4*int64(c.Vocab) + // logits, two slots
		4*int64(c.HeadDim)*int64(maxLen) + // RoPE table
		4*int64(c.Hidden+qkvRows+c.QDim()+c.FFN) + 4*int64(c.Heads)*int64(c.HeadDim+2)*256 + // decode
		64<<20 // graphs, partials and the rest
	return f
}

func gib(n int64) float64 { return float64(n) / (1 << 30) }

// checkFit fails, in one line, when the model's estimated footprint does
// not fit in the device's free memory.
func (r *Runner) checkFit() error {
	free, err := r.dev.freeMemory()
	if err != nil {
		return err
	}
	return fitError(estimateFootprint(r.m, r.maxLen, r.chunk), free, r.dev.Name)
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
	if rest := avail - f.weights - f.scratch; rest > 0 {
		if n := rest / f.kvPerPos / 256 * 256; n >= 256 {
			hint = fmt.Sprintf("; a context of %d positions would fit (--ctx %d)", n, n)
		}
	}
	return fmt.Errorf("cuda: the model needs %.1f GiB of GPU memory (weights %.1f, KV cache of %d positions %.1f, scratch %.1f), %s has %.1f GiB free%s",
		gib(f.total()), gib(f.weights), f.positions, gib(f.kv), gib(f.scratch), name, gib(int64(free)), hint)
}
