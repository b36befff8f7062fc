package vulkan

import (
	"fmt"
	"io"
	"math"

	"inferno/arch"
	"inferno/gguf"
)

// Features are the options of package arch the Vulkan backend executes:
// dense models (Qwen3, Llama, Qwen2, Mistral), normal and NeoX RoPE with
// any scaling (the rope tables), partial RoPE, Q/K/V and output biases,
// GeGLU and OpenAI's clamped SwiGLU, an attention scale, sinks, sliding
// windows, a scaled embedding and post-norms; mixtures of experts with
// softmax gating over all experts or over the top k, and the router's and
// experts' biases (moe.go).
const Features = arch.Dense | arch.FeatPlainQK | arch.FeatBias | arch.FeatRopeNormal | arch.FeatRopeLinear |
	arch.FeatRopeYaRN | arch.FeatRopeLlama3 | arch.FeatGeGLU | arch.FeatSwiGLUOAI | arch.FeatAttnScale |
	arch.FeatEmbedScale | arch.FeatPostNorm | arch.FeatOutBias | arch.FeatSinks | arch.FeatSWA |
	arch.FeatPartialRope | arch.FeatRopeLongRoPE | arch.FeatMoESoftmax | arch.FeatMoESoftmaxTopK | arch.FeatMoEBias

// Options configure a Model.
type Options struct {
	// MaxLen is the most positions a sequence may hold (0: the model's
	// context length).
	MaxLen int
	// Device is the index of the Vulkan device (Devices); negative: the
	// first discrete GPU, else the first usable device (Pick).
	Device int
	// NoGraph records every pass's command buffer anew instead of
	// replaying the one recorded for its shape.
	NoGraph bool
	// Progress, when not nil, receives a progress line while the weights
	// upload (redrawn in place with \r).
	Progress io.Writer
	// Memory is the share of the device's memory the process may take
	// (0: DefaultMemory); MemoryBytes the budget in bytes instead.
	Memory      float64
	MemoryBytes uint64
	// IntDot says when the decode products take integer activations and
	// 8-bit integer dot products (intdot.go): by default where the
	// device says they are accelerated.
	IntDot IntDot
}

// DefaultMemory is the share of the device's memory taken by default,
// leaving the rest to others, as vLLM's gpu_memory_utilization.
const DefaultMemory = 0.9

// A matrix is a weight matrix on the device, in its file encoding.
type matrix struct {
	buf  *Buffer
	typ  gguf.TensorType
	rows int
	cols int
	rb   int // bytes a row
}

// A vector is a float32 vector on the device (a norm's gains, a bias).
type vector struct {
	buf *Buffer
	n   int
}

// A layer is one layer's weights on the device, by role. Matrices that
// multiply the same input are one matrix where their types agree (their
// rows one after the other): qkv, Q's rows then K's and V's, and gateUp,
// Gate's then Up's; one product then writes the packed row of all three
// (two) outputs that the pass reads with strides. Otherwise each has its
// own (mats) and writes its part of the packed row.
type layer struct {
	mats    map[arch.Role]*matrix
	vecs    map[arch.Role]*vector
	qkv     *matrix
	qkvBias *vector // Q's, K's and V's biases one after the other
	gateUp  *matrix
}

// Model is a model's weights on a Vulkan device, with the device: what
// the batched runners made from it share. The device is released when the
// Model and every runner made from it are closed.
type Model struct {
	d       *Device
	m       arch.Model
	c       *arch.Config
	opts    Options
	maxLen  int
	embed   *matrix
	output  *matrix
	outNorm *vector
	layers  []layer
	rope    *Buffer // cos, sin of every position and pair of the global layers
	ropeLoc *Buffer // of the local layers, when they have a RoPE of their own
	// ropeArgs holds each layer's rope block (ropeArgs, ropeArgsBytes
	// apart): what attn's decode shape (Fuse) reads.
	ropeArgs *Buffer
	attn     [2]attnShape // the attention's shape for decode passes and passes with prompts
	weights  int64        // bytes of device memory the weights take
	budget   int64        // bytes the process may take
	runners  int
	closed   bool
	intDot   bool // the products take integer activations where they can (mulMVQ)
}

// Check returns an error, in one line, if the Vulkan backend cannot run
// m: an option it does not execute or a weight type it has no shader for.
func Check(m arch.Model) error {
	c := m.Hyper()
	if err := c.Validate(); err != nil {
		return err
	}
	if err := c.Check("vulkan", Features); err != nil {
		return err
	}
	if err := checkMoE(c); err != nil {
		return err
	}
	if err := m.Tensors().Check(c); err != nil {
		return err
	}
	for _, w := range m.Tensors().Matrices() {
		if err := checkWeightRows(w.Type, w.Cols); err != nil {
			return fmt.Errorf("%s: tensor %q: %w", c.Arch, w.Name, err)
		}
	}
	return nil
}

// Load uploads m's weights to a Vulkan device.
func Load(m arch.Model, opts Options) (*Model, error) {
	if err := Check(m); err != nil {
		return nil, err
	}
	c := m.Hyper()
	d, err := Open(opts.Device)
	if err != nil {
		return nil, err
	}
	md := &Model{d: d, m: m, c: c, opts: opts, maxLen: c.ContextLength, intDot: useIntDot(&d.DeviceInfo, opts.IntDot)}
	if opts.MaxLen > 0 && opts.MaxLen < md.maxLen {
		md.maxLen = opts.MaxLen
	}
	share := opts.Memory
	if share <= 0 || share > 1 {
		share = DefaultMemory
	}
	md.budget = int64(float64(d.MemoryBytes) * share)
	if opts.MemoryBytes > 0 {
		md.budget = int64(opts.MemoryBytes)
	}
	for i, prompt := range []bool{false, true} {
		if md.attn[i], err = pickAttnShape(c.HeadDim, c.Heads/c.KVHeads, d.SubgroupSize, d.SharedMemory, prompt); err != nil {
			d.Close()
			return nil, err
		}
	}
	if f := md.attn[0]; !f.fuse().exceeds(d.SharedMemory) {
		md.attn[0] = f.fuse()
	}
	if err := md.upload(); err != nil {
		md.release()
		return nil, err
	}
	return md, nil
}

// upload copies the weights and the rope tables to the device.
func (md *Model) upload() error {
	c, w := md.c, md.m.Tensors()
	var total int64
	for _, m := range w.Matrices() {
		total += int64(len(m.Data))
	}
	ropeBytes := int64(md.maxLen) * int64(c.HeadDim) * 4
	if need := total + ropeBytes; need > md.budget {
		return fmt.Errorf("vulkan: the weights (%s) do not fit the %s the process may take on %s", gib(need), gib(md.budget), md.d.Name)
	}
	prog := newProgress(md.opts.Progress, total)
	defer prog.done()
	var err error
	if md.embed, err = md.matrix(w.Embed, prog); err != nil {
		return err
	}
	md.output = md.embed
	if w.Output != w.Embed {
		if md.output, err = md.matrix(w.Output, prog); err != nil {
			return err
		}
	}
	if md.outNorm, err = md.vector(w.OutputNorm); err != nil {
		return err
	}
	md.layers = make([]layer, c.Layers)
	for i := range w.Layers {
		l := &w.Layers[i]
		ml := &md.layers[i]
		*ml = layer{mats: map[arch.Role]*matrix{}, vecs: map[arch.Role]*vector{}}
		if ml.qkv, err = md.fused(prog, l.Matrix(arch.RoleQ), l.Matrix(arch.RoleK), l.Matrix(arch.RoleV)); err != nil {
			return err
		}
		if c.Bias {
			b := append(append(append([]float32(nil), l.Vector(arch.RoleQBias)...), l.Vector(arch.RoleKBias)...), l.Vector(arch.RoleVBias)...)
			if ml.qkvBias, err = md.vector(b); err != nil {
				return err
			}
		}
		if l.Matrix(arch.RoleGate) != nil {
			if ml.gateUp, err = md.fused(prog, l.Matrix(arch.RoleGate), l.Matrix(arch.RoleUp)); err != nil {
				return err
			}
		}
		for _, r := range c.LayerRoles() {
			switch r {
			case arch.RoleQBias, arch.RoleKBias, arch.RoleVBias:
				continue // in qkvBias
			case arch.RoleQ, arch.RoleK, arch.RoleV:
				if ml.qkv != nil {
					continue
				}
			case arch.RoleGate, arch.RoleUp:
				if ml.gateUp != nil {
					continue
				}
			}
			if r.Vector() {
				if md.layers[i].vecs[r], err = md.vector(l.Vector(r)); err != nil {
					return err
				}
				continue
			}
			if md.layers[i].mats[r], err = md.matrix(l.Matrix(r), prog); err != nil {
				return err
			}
		}
	}
	if md.rope, err = md.ropeTable(&c.Rope); err != nil {
		return err
	}
	md.ropeLoc = md.rope
	if c.LocalRope.Theta != 0 {
		if md.ropeLoc, err = md.ropeTable(&c.LocalRope); err != nil {
			return err
		}
	}
	return md.uploadRopeArgs()
}

// uploadRopeArgs writes each layer's rope block: its table (the local
// layers' own RoPE where they have one), its QK-norm gains, its options.
func (md *Model) uploadRopeArgs() error {
	c := md.c
	buf := make([]byte, 0, c.Layers*ropeArgsBytes)
	for i := range c.Layers {
		tab := md.rope
		if c.LayerWindow(i) > 0 && c.LocalRope.Theta != 0 {
			tab = md.ropeLoc
		}
		a := ropeArgs{Tab: tab.Addr(), RotDims: uint32(c.RotaryDims()), Style: ropeStyle(c.LayerRope(i).Style),
			MaxPos: uint32(md.maxLen), Eps: c.Eps}
		a.QGain, a.KGain = a.Tab, a.Tab // read only with QK-norm
		if c.QKNorm {
			l := &md.layers[i]
			a.QGain, a.KGain, a.Flags = l.vecs[arch.RoleQNorm].buf.Addr(), l.vecs[arch.RoleKNorm].buf.Addr(), ropeNorm
		}
		b := PushBytes(&a)
		buf = append(buf, b...)
		buf = append(buf, make([]byte, ropeArgsBytes-len(b))...)
	}
	var err error
	if md.ropeArgs, err = md.d.NewBuffer(int64(len(buf))); err != nil {
		return fmt.Errorf("vulkan: the layers' rope blocks: %w", err)
	}
	return md.d.Write(md.ropeArgs, 0, buf)
}

func (md *Model) matrix(w *arch.Weight, prog *progress) (*matrix, error) {
	b, err := md.d.NewBuffer(int64(len(w.Data)))
	if err != nil {
		return nil, fmt.Errorf("vulkan: tensor %q: %w", w.Name, err)
	}
	md.weights += b.Size()
	if err := md.d.Write(b, 0, w.Data); err != nil {
		b.Free()
		return nil, fmt.Errorf("vulkan: tensor %q: %w", w.Name, err)
	}
	prog.add(int64(len(w.Data)))
	return &matrix{buf: b, typ: w.Type, rows: w.Rows, cols: w.Cols, rb: w.RowBytes()}, nil
}

// fused uploads ws as one matrix, their rows one after the other, when
// they have the same type and width; nil (nothing uploaded) otherwise.
func (md *Model) fused(prog *progress, ws ...*arch.Weight) (*matrix, error) {
	n, rows := 0, 0
	for _, w := range ws {
		if w.Type != ws[0].Type || w.Cols != ws[0].Cols {
			return nil, nil
		}
		n += len(w.Data)
		rows += w.Rows
	}
	b, err := md.d.NewBuffer(int64(n))
	if err != nil {
		return nil, fmt.Errorf("vulkan: tensor %q: %w", ws[0].Name, err)
	}
	md.weights += b.Size()
	off := int64(0)
	for _, w := range ws {
		if err := md.d.Write(b, off, w.Data); err != nil {
			b.Free()
			return nil, fmt.Errorf("vulkan: tensor %q: %w", w.Name, err)
		}
		off += int64(len(w.Data))
		prog.add(int64(len(w.Data)))
	}
	return &matrix{buf: b, typ: ws[0].Type, rows: rows, cols: ws[0].Cols, rb: ws[0].RowBytes()}, nil
}

func (md *Model) vector(v []float32) (*vector, error) {
	if v == nil {
		return nil, nil
	}
	b, err := md.d.NewBuffer(int64(4 * len(v)))
	if err != nil {
		return nil, err
	}
	md.weights += b.Size()
	if err := md.d.Write(b, 0, F32Bytes(v)); err != nil {
		b.Free()
		return nil, err
	}
	return &vector{buf: b, n: len(v)}, nil
}

// ropeTable uploads the cos and sin of rope's angles for every position
// below maxLen.
func (md *Model) ropeTable(rope *arch.Rope) (*Buffer, error) {
	tab, err := RopeTable(rope, md.c.RotaryDims(), md.maxLen)
	if err != nil {
		return nil, err
	}
	b, err := md.d.NewBuffer(int64(4 * len(tab)))
	if err != nil {
		return nil, err
	}
	md.weights += b.Size()
	return b, md.d.Write(b, 0, F32Bytes(tab))
}

// Close releases the weights, and the device once no runner uses it.
func (md *Model) Close() error {
	if md.closed {
		return nil
	}
	md.closed = true
	if md.runners == 0 {
		md.release()
	}
	return nil
}

func (md *Model) release() {
	free := func(b *Buffer) { b.Free() }
	if md.embed != nil {
		free(md.embed.buf)
	}
	if md.output != nil && md.output != md.embed {
		free(md.output.buf)
	}
	if md.outNorm != nil {
		free(md.outNorm.buf)
	}
	for i := range md.layers {
		l := &md.layers[i]
		for _, m := range l.mats {
			if m != nil {
				free(m.buf)
			}
		}
		for _, v := range l.vecs {
			if v != nil {
				free(v.buf)
			}
		}
		for _, m := range []*matrix{l.qkv, l.gateUp} {
			if m != nil {
				free(m.buf)
			}
		}
		if l.qkvBias != nil {
			free(l.qkvBias.buf)
		}
	}
	if md.ropeLoc != md.rope {
		md.ropeLoc.Free()
	}
	md.rope.Free()
	if md.ropeArgs != nil {
		md.ropeArgs.Free()
	}
	md.d.Close()
}

// PoolMemory returns the bytes left in the budget for KV pools and
// scratch after the weights.
func (md *Model) PoolMemory() (uint64, error) {
	return uint64(max(0, md.budget-md.weights)), nil
}

// Device describes the device the model is on.
func (md *Model) Device() DeviceInfo { return md.d.DeviceInfo }

func gib(n int64) string { return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30)) }

// A progress prints a progress line of the upload.
type progress struct {
	w          io.Writer
	total, cur int64
	last       int
}

func newProgress(w io.Writer, total int64) *progress { return &progress{w: w, total: total, last: -1} }

func (p *progress) add(n int64) {
	if p.w == nil || p.total == 0 {
		return
	}
	p.cur += n
	if pct := int(math.Floor(100 * float64(p.cur) / float64(p.total))); pct != p.last {
		p.last = pct
		fmt.Fprintf(p.w, "\rvulkan: uploading weights %3d%% (%s)", pct, gib(p.total))
	}
}

func (p *progress) done() {
	if p.w != nil && p.last >= 0 {
		fmt.Fprintln(p.w)
	}
}
