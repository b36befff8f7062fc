package runner

import (
	"errors"

	"inferno/engine"
)

// gpuBatchRunner opens the GPU's batched runner with blocks blocks of bs
// positions (0: as many as the device's free memory holds, up to want).
func (b *Backend) gpuBatchRunner(blocks, bs, want int) (engine.BatchRunner, error) {
	_ = blocks
	_ = bs
	_ = want
	return nil, errors.New("runner: batched decoding on the GPU is not available yet")
}
