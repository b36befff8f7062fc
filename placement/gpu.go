package placement

import (
	"inferno/engine"
)

// gpuBatchRunner opens the GPU's batched runner with blocks blocks of bs
// positions, sharing the backend's GPU weights (cuda.Model). With
// blocks 0 it takes want blocks (room for the requested sequences) or,
// when the device has not that much free, as many as its free memory
// holds.
func (b *Backend) gpuBatchRunner(blocks, bs, want int) (engine.BatchRunner, error) {
	if blocks > 0 {
		return b.gpu.NewBatchRunner(blocks, bs)
	}
	if br, err := b.gpu.NewBatchRunner(want, bs); err == nil {
		return br, nil
	}
	return b.gpu.NewBatchRunner(0, bs)
}
