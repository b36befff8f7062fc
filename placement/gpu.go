package placement

import (
	"inferno/arch"
	"inferno/engine"
	"inferno/kvcache"
)

// gpuTypicalPositions is the length of sequence the GPU's window pool is
// sized for when the device's free memory sizes the pools: as many
// sequences as it holds at this many positions each (at most the
// context), up to the sequences asked for.
const gpuTypicalPositions = 2048

// gpuBatchRunner opens the GPU's batched runner with blocks blocks of bs
// positions (and, for a model with sliding-window layers, a window pool
// of localBlocks, else 0), sharing the backend's GPU weights (cuda.Model).
// With blocks 0 it takes want blocks (room for the requested sequences)
// or, when the device has not that much free, as many as its free memory
// holds.
func (b *Backend) gpuBatchRunner(blocks, localBlocks, bs, want int) (engine.BatchRunner, error) {
	open := func(n int) (engine.BatchRunner, error) {
		br, err := b.gpu.NewWindowBatchRunner(n, localBlocks, bs)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return br, nil
	}
	if blocks > 0 {
		return open(blocks)
	}
	if br, err := open(want); err == nil {
		return br, nil
	}
	return open(0)
}

// gpuWindowSequences returns how many sequences of gpuTypicalPositions
// (or the context, if shorter) the memory left for the KV pools holds
// (cuda.Model.PoolMemory: within the GPU memory budget), with local of
// c's layers in a window pool, at least 1 and at most want.
func (b *Backend) gpuWindowSequences(c *arch.Config, local, bs, want int) (int, error) {
	free, err := b.gpu.PoolMemory()
	if err != nil {
		return 0, err
	}
	typical := min(b.maxLen, gpuTypicalPositions)
	per := kvcache.PageBytes(c.Layers-local, c.KVDim(), bs, kvcache.F16)*int64((typical+bs-1)/bs) +
		kvcache.PageBytes(local, c.KVDim(), bs, kvcache.F16)*int64(kvcache.WindowBlocks(1, c.Window, engine.PromptChunk, bs))
	return max(1, min(want, int(int64(free)/per))), nil
}
