package vulkan

import (
	"embed"
	"encoding/binary"
	"fmt"
	"time"

	"inferno/backend/vulkan/vk"
)

// spvFS holds the compiled shaders, spv/<name>.spv, written by
// shaders/build.sh.
//
//go:embed spv
var spvFS embed.FS

// A Pipeline is a compute shader with its specialization constants.
type Pipeline struct {
	Name   string
	handle uint64
}

type pipelineKey struct {
	name string
	spec [12]uint32
	n    int
}

// Pipeline returns the compute pipeline of the embedded shader name with
// specialization constants spec (constant_id 0, 1, ... in order), made
// once and kept by the device.
func (d *Device) Pipeline(name string, spec ...uint32) (*Pipeline, error) {
	key, err := newPipelineKey(name, spec)
	if err != nil {
		return nil, err
	}
	if p, ok := d.pipelines[key]; ok {
		return p, nil
	}
	b, err := spvFS.ReadFile("spv/" + name + ".spv")
	if err != nil {
		return nil, fmt.Errorf("vulkan: no shader %q", name)
	}
	return d.makePipeline(key, b)
}

func newPipelineKey(name string, spec []uint32) (pipelineKey, error) {
	key := pipelineKey{name: name, n: len(spec)}
	if len(spec) > len(key.spec) {
		return key, fmt.Errorf("vulkan: shader %s: %d specialization constants, at most %d", name, len(spec), len(key.spec))
	}
	copy(key.spec[:], spec)
	return key, nil
}

// makePipeline creates the pipeline of SPIR-V code for key.
func (d *Device) makePipeline(key pipelineKey, code []byte) (*Pipeline, error) {
	if len(code) == 0 || len(code)%4 != 0 || binary.LittleEndian.Uint32(code) != 0x07230203 {
		return nil, fmt.Errorf("vulkan: shader %s is not SPIR-V", key.name)
	}
	words := make([]uint32, len(code)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(code[4*i:])
	}
	mod, err := d.dev.CreateShaderModule(words)
	if err != nil {
		return nil, fmt.Errorf("vulkan: shader %s: %w", key.name, err)
	}
	defer d.dev.DestroyShaderModule(mod)
	var pin vk.Pinner
	defer pin.Unpin()
	var spec uintptr
	if key.n > 0 {
		entries := make([]vk.SpecializationMapEntry, key.n)
		for i := range entries {
			entries[i] = vk.SpecializationMapEntry{ConstantID: uint32(i), Offset: uint32(4 * i), Size: 4}
		}
		values := make([]uint32, key.n)
		copy(values, key.spec[:key.n])
		si := &vk.SpecializationInfo{MapEntryCount: uint32(key.n), PMapEntries: vk.Slice(&pin, entries),
			DataSize: uintptr(4 * key.n), PData: vk.Slice(&pin, values)}
		spec = vk.Ptr(&pin, si)
	}
	ci := &vk.ComputePipelineCreateInfo{SType: vk.StructureTypeComputePipelineCreateInfo, Layout: d.layout, BasePipelineIndex: -1}
	ci.Stage = vk.PipelineShaderStageCreateInfo{SType: vk.StructureTypePipelineShaderStageCreateInfo, Stage: vk.ShaderStageCompute,
		Module: mod, PName: pin.CString("main"), PSpecializationInfo: spec}
	h, err := d.dev.CreateComputePipeline(d.cache, ci)
	if err != nil {
		return nil, fmt.Errorf("vulkan: shader %s %v: %w", key.name, key.spec[:key.n], err)
	}
	p := &Pipeline{Name: key.name, handle: h}
	d.pipelines[key] = p
	return p, nil
}

// A Recorder records a command buffer: dispatches and barriers.
type Recorder struct {
	d     *Device
	cb    uintptr
	bound *Pipeline
	// With timing, a timestamp is written after each dispatch into the
	// query pool, and stamps names the dispatch of each.
	timing *timing
}

// timing is a Recorder's timestamps of its dispatches.
type timing struct {
	pool   uint64
	cap    int
	stamps []string // the pipeline of each timestamp after the first
}

// Begin starts recording a command buffer to submit once.
func (d *Device) Begin() (*Recorder, error) { return d.begin(vk.CommandBufferUsageOneTimeSubmit) }

// Record starts recording a command buffer to submit many times
// (Replay), until Release.
func (d *Device) Record() (*Recorder, error) { return d.begin(0) }

func (d *Device) begin(flags uint32) (*Recorder, error) {
	if d.closed {
		return nil, fmt.Errorf("vulkan: device closed")
	}
	if d.lost != nil {
		return nil, d.lost
	}
	cb, err := d.dev.AllocateCommandBuffer(d.pool)
	if err != nil {
		return nil, err
	}
	if err := d.dev.BeginCommandBuffer(cb, flags); err != nil {
		d.dev.FreeCommandBuffer(d.pool, cb)
		return nil, err
	}
	return &Recorder{d: d, cb: cb}, nil
}

// Dispatch records x*y*z workgroups of p with the push constants push
// (PushBytes of the shader's push struct).
func (r *Recorder) Dispatch(p *Pipeline, x, y, z uint32, push []byte) {
	if x == 0 || y == 0 || z == 0 {
		return
	}
	if r.bound != p {
		r.d.dev.CmdBindPipeline(r.cb, p.handle)
		r.bound = p
	}
	r.d.dev.CmdPushConstants(r.cb, r.d.layout, push)
	r.d.dev.CmdDispatch(r.cb, x, y, z)
	if t := r.timing; t != nil && len(t.stamps)+1 < t.cap {
		t.stamps = append(t.stamps, p.Name)
		r.d.dev.CmdWriteTimestamp(r.cb, vk.PipelineStageBottomOfPipe, t.pool, uint32(len(t.stamps)))
	}
}

// Barrier records that what was dispatched before is written before what
// is dispatched after reads or writes it.
func (r *Recorder) Barrier() {
	r.d.dev.CmdMemoryBarrier(r.cb, vk.PipelineStageComputeShader, vk.PipelineStageComputeShader,
		vk.AccessShaderWrite, vk.AccessShaderRead|vk.AccessShaderWrite)
}

// CopyBarrier is Barrier between dispatches and copies, either way.
func (r *Recorder) CopyBarrier() {
	r.d.dev.CmdMemoryBarrier(r.cb, vk.PipelineStageComputeShader|vk.PipelineStageTransfer, vk.PipelineStageComputeShader|vk.PipelineStageTransfer,
		vk.AccessShaderWrite|vk.AccessTransferWrite, vk.AccessShaderRead|vk.AccessShaderWrite|vk.AccessTransferRead|vk.AccessTransferWrite)
}

// Copy records a copy of n bytes from src at srcOff to dst at dstOff.
func (r *Recorder) Copy(src, dst *Buffer, srcOff, dstOff, n int64) {
	r.d.dev.CmdCopyBuffer(r.cb, src.buf, dst.buf, uint64(srcOff), uint64(dstOff), uint64(n))
}

// end finishes recording, with a barrier that makes the shaders' writes
// visible to the host.
func (r *Recorder) end() error {
	r.d.dev.CmdMemoryBarrier(r.cb, vk.PipelineStageComputeShader|vk.PipelineStageTransfer, vk.PipelineStageHost,
		vk.AccessShaderWrite|vk.AccessTransferWrite, vk.AccessHostRead)
	return r.d.dev.EndCommandBuffer(r.cb)
}

// Submit ends r, runs it and waits for it; r is released.
func (d *Device) Submit(r *Recorder) error {
	defer r.Release()
	if err := r.end(); err != nil {
		return err
	}
	return d.run(r)
}

// End finishes a recorder made by Record, for Replay.
func (r *Recorder) End() error { return r.end() }

// Replay runs a recorded command buffer again and waits for it.
func (d *Device) Replay(r *Recorder) error { return d.run(r) }

func (d *Device) run(r *Recorder) error {
	if d.lost != nil {
		return d.lost
	}
	d.cb, d.fenceAt = r.cb, d.fence
	if err := d.dev.SubmitOne(d.queue, &d.si, &d.cb, d.fence); err != nil {
		return err
	}
	if err := d.dev.Wait(&d.fenceAt, d.wait); err != nil {
		d.lost = fmt.Errorf("vulkan: %s: waiting (up to %v) for a submission: %w; the device is lost to this process", d.Name, time.Duration(d.wait), err)
		return d.lost
	}
	return d.dev.Reset(&d.fenceAt)
}

// Release frees the recorder's command buffer (not on a lost device,
// whose GPU may still run it).
func (r *Recorder) Release() {
	if r.d.lost != nil {
		r.cb, r.timing = 0, nil
		return
	}
	if r.cb != 0 {
		r.d.dev.FreeCommandBuffer(r.d.pool, r.cb)
		r.cb = 0
	}
	if r.timing != nil {
		r.d.dev.DestroyQueryPool(r.timing.pool)
		r.timing = nil
	}
}

// RecordTimed is Record with a timestamp after each of up to maxDispatches
// dispatches (for --trace); Times reads them after a Replay.
func (d *Device) RecordTimed(maxDispatches int) (*Recorder, error) {
	if !d.tsValid {
		return nil, fmt.Errorf("vulkan: %s does not time its compute queue", d.Name)
	}
	pool, err := d.dev.CreateTimestampPool(uint32(maxDispatches + 1))
	if err != nil {
		return nil, err
	}
	r, err := d.begin(0)
	if err != nil {
		d.dev.DestroyQueryPool(pool)
		return nil, err
	}
	r.timing = &timing{pool: pool, cap: maxDispatches + 1}
	d.dev.CmdResetQueryPool(r.cb, pool, 0, uint32(maxDispatches+1))
	d.dev.CmdWriteTimestamp(r.cb, vk.PipelineStageTopOfPipe, pool, 0)
	return r, nil
}

// Times returns, after a Replay of a RecordTimed recorder, each
// dispatch's pipeline name and the nanoseconds from the previous
// dispatch's end (or the buffer's start) to its end.
func (r *Recorder) Times() (names []string, ns []float64, err error) {
	t := r.timing
	if t == nil {
		return nil, nil, fmt.Errorf("vulkan: the recorder is not timed")
	}
	ts := make([]uint64, len(t.stamps)+1)
	if err := r.d.dev.Timestamps(t.pool, 0, ts); err != nil {
		return nil, nil, err
	}
	ns = make([]float64, len(t.stamps))
	for i := range ns {
		ns[i] = float64(ts[i+1]-ts[i]) * float64(r.d.tsPeriod)
	}
	return t.stamps, ns, nil
}
