// Package placement opens a model on a compute backend: it chooses between
// the CPU backends and the GPU, sizes the context and the pool of KV
// blocks, and hands out the batched runner (engine.BatchRunner) that
// every command runs: the server through its scheduler, the
// single-sequence commands as a batch of one (engine.Single). The command line
// and the server both start here.
//
// What only some backends can do (sample on the device, queue greedy
// steps ahead, profile a step) is reached through the optional
// interfaces of package engine (engine.DeviceSampler,
// engine.Lookaheader, engine.Profiler), never through a concrete type.
package placement

import (
	"errors"
	"fmt"
	"io"

	"inferno/arch"
	"inferno/backend"
	"inferno/backend/cuda"
	"inferno/backend/forward"
	"inferno/backend/pool"
	"inferno/backend/scalar"
	"inferno/backend/simd"
	"inferno/backend/vulkan"
	"inferno/engine"
	"inferno/kvcache"
	"inferno/model"
)

// Config chooses and sizes a backend.
type Config struct {
	// Backend is "auto" (or ""), "scalar", "simd", "pool", "cuda" or
	// "vulkan". auto takes CUDA when an NVIDIA driver and device are
	// there and the model runs on it, else Vulkan likewise, else the pool
	// backend, and says which in one line (Warn).
	Backend string
	// Device is the Vulkan device's index (vulkan.Devices; -1 or 0 with
	// DeviceSet false: vulkan.Pick's choice).
	Device    int
	DeviceSet bool
	// Threads is the pool backend's worker count (0: one per core).
	Threads int
	// Context is the most positions a sequence may hold (0: the model's
	// context length). It also chooses a LongRoPE model's RoPE factors
	// (Phi-4-mini, Phi-3 128k) as llama.cpp does: the long ones when it
	// exceeds the model's original context, the short ones within
	// (arch.ForContext).
	Context int
	// KVType is the CPU KV cache's element type: "f32", "f16", or "auto"
	// (or ""): f32 on scalar, f16 on simd and pool. The GPU keeps f16.
	KVType string
	// Trace wraps a CPU backend's operations in a backend.Tracer.
	Trace bool
	// TracePrompts makes the GPU's batched runners time every kernel of
	// their prompt passes (cuda.Options.TracePrompts; the CPU ignores it).
	TracePrompts bool
	// NoGraph launches the GPU's decode kernels one by one (cuda only).
	NoGraph bool
	// GPUMemory is the share of the GPU's memory the process may take
	// (cuda.Options.Memory; 0: cuda.DefaultMemory, 90%), GPUMemoryBytes
	// the budget in bytes instead when not 0.
	GPUMemory      float64
	GPUMemoryBytes int64
	// Progress receives the GPU upload's progress bar; nil: none.
	Progress io.Writer
	// Warn receives one-line notices, such as auto falling back to the
	// CPU; nil: discarded.
	Warn func(msg string)
}

// MaxThreads bounds Config.Threads: far more workers than cores only waste
// memory.
const MaxThreads = 1024

// A Backend is a model opened on one compute backend. NewBatchRunner
// gives a runner of batches over a pool of KV blocks. A Backend's runners
// must be used by one goroutine at a time: they share the backend's
// workers or GPU stream.
type Backend struct {
	m       *model.Model
	name    string
	maxLen  int
	kv      kvcache.Type
	ops     backend.Ops     // CPU backends
	tracer  *backend.Tracer // with Config.Trace on a CPU backend
	gpu     *cuda.Model     // the GPU's weights, which its batched runners share
	vk      *vulkan.Model   // the same on the Vulkan backend
	threads int
	closed  bool
}

// Open prepares m on the backend cfg names. On the GPU it uploads the
// weights (which takes seconds for large models).
func Open(m *model.Model, cfg Config) (*Backend, error) {
	if cfg.Context < 0 {
		return nil, fmt.Errorf("context %d must not be negative", cfg.Context)
	}
	if cfg.Threads < 0 || cfg.Threads > MaxThreads {
		return nil, fmt.Errorf("threads %d: want 0 (all cores) to %d", cfg.Threads, MaxThreads)
	}
	if c := m.Arch.Hyper().ContextLength; cfg.Context > c {
		return nil, fmt.Errorf("context %d exceeds the model's context length %d", cfg.Context, c)
	}
	name := cfg.Backend
	if name == "" {
		name = "auto"
	}
	kv := kvcache.F16
	switch cfg.KVType {
	case "", "auto":
		if name == "scalar" {
			kv = kvcache.F32
		}
	default:
		t, err := kvcache.ParseType(cfg.KVType)
		if err != nil {
			return nil, fmt.Errorf("KV cache type: %w", err)
		}
		kv = t
	}
	switch name {
	case "scalar", "simd", "pool":
		if cfg.NoGraph {
			return nil, fmt.Errorf("--no-graph applies to the GPU backends, not %s", name)
		}
	case "cuda", "vulkan":
		if cfg.Threads != 0 {
			return nil, fmt.Errorf("--threads applies to the pool backend, not %s", name)
		}
		if cfg.KVType != "" && cfg.KVType != "auto" {
			return nil, fmt.Errorf("--kv-type applies to the CPU backends (the %s backend keeps an f16 cache)", name)
		}
	case "auto":
	default:
		return nil, fmt.Errorf("unknown backend %q (want auto, scalar, simd, pool, cuda or vulkan)", name)
	}
	if cfg.DeviceSet && name != "vulkan" && name != "auto" {
		return nil, fmt.Errorf("--device applies to the vulkan backend, not %s", name)
	}
	b := &Backend{m: m, kv: kv, maxLen: cfg.Context}
	if b.maxLen == 0 {
		b.maxLen = m.Arch.Hyper().ContextLength
	}
	switch name {
	case "cuda":
		if err := cuda.Available(); err != nil {
			return nil, err
		}
		if err := b.openGPU(cfg); err != nil {
			return nil, err
		}
		return b, nil
	case "vulkan":
		if err := b.openVulkan(cfg); err != nil {
			return nil, err
		}
		return b, nil
	case "auto":
		// A machine with a GPU hears which backend auto took and why; one
		// without (no NVIDIA driver, no Vulkan device but a CPU
		// implementation such as lavapipe) takes the CPU quietly.
		cudaErr := cuda.Available()
		gpu := cudaErr == nil
		if cudaErr == nil && cfg.DeviceSet {
			cudaErr = errors.New("--device names a vulkan device")
		}
		if cudaErr == nil {
			if cudaErr = b.openGPU(cfg); cudaErr == nil {
				return b, nil
			}
		}
		vkErr := vulkanGPU(cfg)
		if vkErr == nil {
			gpu = true
			if vkErr = b.openVulkan(cfg); vkErr == nil {
				if cfg.Warn != nil {
					cfg.Warn(fmt.Sprintf("using vulkan on %s (%v)", b.vk.Device().Name, cudaErr))
				}
				return b, nil
			}
		}
		if cfg.Warn != nil && gpu {
			cfg.Warn(fmt.Sprintf("using the CPU (%v; %v)", cudaErr, vkErr))
		}
		name = "pool"
	}
	switch name {
	case "scalar":
		b.ops = scalar.NewScalar()
		b.threads = 1
	case "simd":
		b.ops = simd.New()
		b.threads = 1
	case "pool":
		b.ops = pool.New(cfg.Threads)
		b.threads = cfg.Threads
		if b.threads <= 0 {
			b.threads = pool.DefaultThreads()
		}
	}
	if err := forward.Check(m.Arch, b.ops); err != nil {
		return nil, err
	}
	if cfg.Trace {
		b.tracer = backend.NewTracer(b.ops)
		b.ops = b.tracer
	}
	b.name = name
	return b, nil
}

// openGPU uploads the model to the GPU, as run with sequences of up to
// maxLen positions (arch.ForContext: a LongRoPE model's choice of factors).
func (b *Backend) openGPU(cfg Config) error {
	r, err := cuda.Load(arch.ForContext(b.m.Arch, b.maxLen), cuda.Options{MaxLen: cfg.Context, NoGraph: cfg.NoGraph, Progress: cfg.Progress, TracePrompts: cfg.TracePrompts,
		Memory: cfg.GPUMemory, MemoryBytes: uint64(max(cfg.GPUMemoryBytes, 0))})
	if err != nil {
		return err
	}
	b.gpu, b.name, b.kv = r, "cuda", kvcache.F16
	return nil
}

// vulkanGPU returns nil when auto may take the Vulkan device cfg names
// (or vulkan.Pick's): a GPU, not a CPU implementation such as Mesa's
// lavapipe, which is slower than the CPU backends on the same cores.
func vulkanGPU(cfg Config) error {
	if err := vulkan.Available(); err != nil {
		return err
	}
	i := cfg.Device
	if !cfg.DeviceSet {
		var err error
		if i, err = vulkan.Pick(); err != nil {
			return err
		}
	}
	ds, _ := vulkan.Devices()
	if i < 0 || i >= len(ds) {
		return fmt.Errorf("vulkan: no device %d", i)
	}
	if d := ds[i]; d.Type == "cpu" {
		return fmt.Errorf("vulkan: %s is a CPU implementation (--backend vulkan runs on it)", d.Name)
	}
	return nil
}

// openVulkan uploads the model to the Vulkan device cfg names.
func (b *Backend) openVulkan(cfg Config) error {
	dev := -1
	if cfg.DeviceSet {
		dev = cfg.Device
	}
	r, err := vulkan.Load(arch.ForContext(b.m.Arch, b.maxLen), vulkan.Options{MaxLen: cfg.Context, Device: dev, NoGraph: cfg.NoGraph,
		Progress: cfg.Progress, Memory: cfg.GPUMemory, MemoryBytes: uint64(max(cfg.GPUMemoryBytes, 0))})
	if err != nil {
		return err
	}
	b.vk, b.name, b.kv = r, "vulkan", kvcache.F16
	return nil
}

// Name returns the backend's name: "scalar", "simd", "pool", "cuda" or
// "vulkan".
func (b *Backend) Name() string { return b.name }

// GPU reports whether the backend computes on a GPU (cuda or vulkan).
func (b *Backend) GPU() bool { return b.gpu != nil || b.vk != nil }

// Threads returns the CPU threads the backend computes with (0 on the GPU).
func (b *Backend) Threads() int { return b.threads }

// MaxLen returns the most positions a sequence may hold.
func (b *Backend) MaxLen() int { return b.maxLen }

// KVType returns the KV cache's element type.
func (b *Backend) KVType() kvcache.Type { return b.kv }

// Tracer returns the per-operation tracer of a CPU backend opened with
// Config.Trace, or nil.
func (b *Backend) Tracer() *backend.Tracer { return b.tracer }

// Close releases the backend: the CPU workers, or the GPU's weights (the
// device is freed when the last of its batched runners closes too).
func (b *Backend) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if b.gpu != nil {
		return b.gpu.Close()
	}
	if b.vk != nil {
		return b.vk.Close()
	}
	if c, ok := b.ops.(interface{ Close() }); ok {
		c.Close()
	}
	return nil
}

// BatchConfig sizes a batched runner's pool of KV blocks.
type BatchConfig struct {
	// BlockSize is the positions a block holds (0: the backend's
	// DefaultBlockSize).
	BlockSize int
	// Memory is the bytes the pool may take (0: room for Sequences
	// sequences of the full context, on the GPU at most what the device
	// has free).
	Memory int64
	// Sequences sizes the default pool (0: 1).
	Sequences int
	// Blocks, when not 0, is the exact number of blocks, overriding
	// Memory and Sequences (a benchmark's pool for short sequences).
	Blocks int
	// Contiguous asks for the "basic" layout: each sequence's positions
	// in one contiguous region, a block as long as the context (BlockSize
	// must be 0). On the GPU, whose kernels take blocks of at most 4096
	// positions, the blocks keep the default size; a sequence of engine.Single
	// still holds consecutive blocks, one region.
	Contiguous bool
}

// The positions of a KV block unless configured. On a GPU, 16, as vLLM's.
// On the CPU a KV head's positions of a block are consecutive in memory
// (backend.KVIndex), and a decode step's attention reads them as a stream
// a block long: at 4096 positions of Qwen3-0.6B's cache on 2 threads, a
// layer took 1.4-1.7 ms with blocks of 16 positions, 1.30-1.34 with 32,
// 1.20 with 64, 1.14 with 128 and 1.00-1.02 in one block (blocks in random
// order). A partial block is copied, not lost, when a prefix is shared,
// so larger blocks cost only their last positions' memory (vLLM's CPU
// backend also takes 128).
const (
	gpuBlockSize = 16
	cpuBlockSize = 128
)

// DefaultBlockSize returns the positions of a KV block of the backend's
// paged cache unless configured: 16 on a GPU, 128 on the CPU.
func (b *Backend) DefaultBlockSize() int {
	if b.GPU() {
		return gpuBlockSize
	}
	return cpuBlockSize
}

// cpuPoolShare is the fraction of the machine's memory the default CPU
// pool may take. Its memory is mapped, not used, until blocks fill, but a
// server that runs long fills it (finished requests' blocks stay cached
// until evicted), so it must fit beside the weights.
const cpuPoolShare = 0.25

// NewBatchRunner returns a runner for many sequences at once, their keys
// and values in one pool of blocks sized by cfg. The pool always holds at
// least one sequence of the full context.
func (b *Backend) NewBatchRunner(cfg BatchConfig) (engine.BatchRunner, error) {
	if b.closed {
		return nil, errors.New("runner: the backend is closed")
	}
	bs := cfg.BlockSize
	switch {
	case cfg.Contiguous && bs != 0:
		return nil, fmt.Errorf("KV block size %d with the contiguous (basic) layout, whose block is the context", bs)
	case cfg.Contiguous && b.gpu == nil && b.vk == nil:
		bs = b.maxLen
	case bs == 0:
		bs = b.DefaultBlockSize()
	case bs < 1 || bs > 1024:
		return nil, fmt.Errorf("KV block size %d: want 1 to 1024", bs)
	}
	if cfg.Memory < 0 || cfg.Sequences < 0 || cfg.Blocks < 0 {
		return nil, fmt.Errorf("KV pool of %d bytes, %d blocks, for %d sequences", cfg.Memory, cfg.Blocks, cfg.Sequences)
	}
	c := b.m.Arch.Hyper()
	perSeq := (b.maxLen + bs - 1) / bs
	// A model with sliding-window layers and others keeps the former's
	// keys and values in a window pool of their own, sized for a window
	// per sequence (kvcache.WindowBlocks); the main pool holds the
	// others'. Not in the CPU's contiguous layout, one block a sequence.
	local, localBlocks := 0, 0
	for i := range c.Layers {
		if c.LayerWindow(i) > 0 {
			local++
		}
	}
	if local == c.Layers || bs >= b.maxLen {
		local = 0
	}
	if local > 0 {
		localBlocks = min(kvcache.WindowBlocks(max(1, cfg.Sequences), c.Window, engine.PromptChunk, bs), perSeq*max(1, cfg.Sequences))
		if cfg.Blocks > 0 {
			localBlocks = min(localBlocks, cfg.Blocks)
		}
	}
	page := kvcache.PageBytes(c.Layers-local, c.KVDim(), bs, b.kv)
	localBytes := int64(localBlocks) * kvcache.PageBytes(local, c.KVDim(), bs, b.kv)
	blocks := cfg.Blocks
	if blocks == 0 && cfg.Memory > 0 {
		blocks = int((cfg.Memory - localBytes) / page)
		if blocks < perSeq {
			return nil, fmt.Errorf("a KV pool of %d bytes holds %d blocks of %d positions; one sequence of the context (%d positions) needs %d (%d bytes)",
				cfg.Memory, blocks, bs, b.maxLen, perSeq, int64(perSeq)*page)
		}
	}
	if b.vk != nil {
		// f16 keys and values (b.kv); the window pool's first.
		if blocks == 0 {
			blocks = perSeq * max(1, cfg.Sequences)
			if free, err := b.vk.PoolMemory(); err == nil {
				if fit := int((int64(free)*9/10 - localBytes) / page); fit < blocks {
					blocks = max(perSeq, fit)
				}
			}
		}
		br, err := b.vk.NewWindowBatchRunner(blocks, localBlocks, bs)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return br, nil
	}
	if b.gpu != nil {
		if local > 0 && blocks == 0 {
			// The window pool for as many sequences as the device holds
			// at gpuTypicalPositions each (the rest of its memory goes to
			// the main pool).
			seqs, err := b.gpuWindowSequences(c, local, bs, max(1, cfg.Sequences))
			if err != nil {
				return nil, err
			}
			localBlocks = min(kvcache.WindowBlocks(seqs, c.Window, engine.PromptChunk, bs), perSeq*seqs)
		}
		return b.gpuBatchRunner(blocks, localBlocks, bs, perSeq*max(1, cfg.Sequences))
	}
	if blocks == 0 {
		blocks = perSeq * max(1, cfg.Sequences)
		if limit := int64(float64(memTotal())*cpuPoolShare) - localBytes; int64(blocks)*page > limit {
			blocks = max(perSeq, int(limit/page))
		}
	}
	if local > 0 {
		return forward.NewWindowBatched(b.m.Arch, b.ops, b.maxLen, blocks, localBlocks, bs, b.kv)
	}
	return forward.NewBatched(b.m.Arch, b.ops, b.maxLen, blocks, bs, b.kv)
}
