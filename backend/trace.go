package backend

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"inferno/arch"
	"inferno/engine"
)

// Tracer wraps an Ops and counts the calls and time of each operation, so
// that a table can show where a forward pass spends its time. Matrix
// products are counted per weight (with the layer number dropped, so all
// layers' attn_q.weight add up together).
type Tracer struct {
	Ops
	stats map[string]*engine.OpStats
	names map[*Weight]string // "MatMul " + role, built once per weight
}

// NewTracer returns a tracing wrapper around ops.
func NewTracer(ops Ops) *Tracer {
	return &Tracer{Ops: ops, stats: map[string]*engine.OpStats{}, names: map[*Weight]string{}}
}

func (t *Tracer) add(name string, start time.Time) {
	d := time.Since(start)
	s := t.stats[name]
	if s == nil {
		s = &engine.OpStats{Name: name}
		t.stats[name] = s
	}
	s.Calls++
	s.Total += d
}

// weightRole strips the "blk.N." prefix of a weight name.
func weightRole(name string) string {
	if strings.HasPrefix(name, "blk.") {
		if i := strings.IndexByte(name[4:], '.'); i >= 0 {
			return name[4+i+1:]
		}
	}
	return name
}

// MatMul times the wrapped MatMul, counted per weight role.
func (t *Tracer) MatMul(y []float32, w *Weight, x []float32, n int) {
	name, ok := t.names[w]
	if !ok {
		name = "MatMul " + weightRole(w.Name)
		t.names[w] = name
	}
	defer t.add(name, time.Now())
	t.Ops.MatMul(y, w, x, n)
}

// RMSNorm times the wrapped RMSNorm.
func (t *Tracer) RMSNorm(y, x, gain []float32, eps float32) {
	defer t.add("RMSNorm", time.Now())
	t.Ops.RMSNorm(y, x, gain, eps)
}

// RoPE times the wrapped RoPE.
func (t *Tracer) RoPE(x []float32, pos []int32, nHeads, headDim, rotDims int, rope *arch.Rope) {
	defer t.add("RoPE", time.Now())
	t.Ops.RoPE(x, pos, nHeads, headDim, rotDims, rope)
}

// Attention times the wrapped Attention.
func (t *Tracer) Attention(out, q, k, v []float32, seqs []SeqAttn, blockSize, nHeads, nKV, headDim int, opt AttnOpts) {
	defer t.add("Attention", time.Now())
	t.Ops.Attention(out, q, k, v, seqs, blockSize, nHeads, nKV, headDim, opt)
}

// ToF16 times the wrapped ToF16.
func (t *Tracer) ToF16(dst []uint16, src []float32) {
	defer t.add("ToF16", time.Now())
	t.Ops.ToF16(dst, src)
}

// AttentionF16 times the wrapped AttentionF16.
func (t *Tracer) AttentionF16(out, q []float32, k, v []uint16, seqs []SeqAttn, blockSize, nHeads, nKV, headDim int, opt AttnOpts) {
	defer t.add("AttentionF16", time.Now())
	t.Ops.AttentionF16(out, q, k, v, seqs, blockSize, nHeads, nKV, headDim, opt)
}

// SwiGLU times the wrapped SwiGLU.
func (t *Tracer) SwiGLU(out, gate, up []float32) {
	defer t.add("SwiGLU", time.Now())
	t.Ops.SwiGLU(out, gate, up)
}

// GeGLU times the wrapped GeGLU.
func (t *Tracer) GeGLU(out, gate, up []float32) {
	defer t.add("GeGLU", time.Now())
	t.Ops.GeGLU(out, gate, up)
}

// SwiGLUOAI times the wrapped SwiGLUOAI.
func (t *Tracer) SwiGLUOAI(out, gate, up []float32) {
	defer t.add("SwiGLUOAI", time.Now())
	t.Ops.SwiGLUOAI(out, gate, up)
}

// Add times the wrapped Add.
func (t *Tracer) Add(x, y []float32) {
	defer t.add("Add", time.Now())
	t.Ops.Add(x, y)
}

// Close closes the wrapped Ops if it has a Close method.
func (t *Tracer) Close() {
	if c, ok := t.Ops.(interface{ Close() }); ok {
		c.Close()
	}
}

// Stats returns the totals, largest total time first.
func (t *Tracer) Stats() []engine.OpStats {
	var s []engine.OpStats
	for _, v := range t.stats {
		s = append(s, *v)
	}
	sort.Slice(s, func(i, j int) bool {
		return s[i].Total > s[j].Total || s[i].Total == s[j].Total && s[i].Name < s[j].Name
	})
	return s
}

// WriteTraceTable writes stats as an aligned table: calls, total and mean
// time, and share of the whole.
func WriteTraceTable(w io.Writer, stats []engine.OpStats) error {
	var all time.Duration
	for _, s := range stats {
		all += s.Total
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "operation\tcalls\ttotal ms\tmean us\tshare\t\n")
	for _, s := range stats {
		mean := float64(s.Total.Microseconds()) / float64(max(s.Calls, 1))
		share := 0.0
		if all > 0 {
			share = 100 * float64(s.Total) / float64(all)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.1f\t%.1f%%\t\n", s.Name, s.Calls, float64(s.Total.Nanoseconds())/1e6, mean, share)
	}
	fmt.Fprintf(tw, "total\t\t%.3f\t\t\t\n", float64(all.Nanoseconds())/1e6)
	return tw.Flush()
}
