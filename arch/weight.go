package arch

import (
	"fmt"

	"inferno/gguf"
	"inferno/numfmt"
)

// Weight is a 2-D weight matrix in its file encoding: Rows rows of Cols
// values each, row-major, as GGUF stores a tensor of shape (Cols, Rows).
// Type is any type package numfmt knows (numfmt.FormatOf), and Cols a
// multiple of its block size; each backend says which types it computes
// with. A stack of experts' matrices is one Weight of experts x rows rows.
type Weight struct {
	Name string
	Type gguf.TensorType
	Rows int
	Cols int
	Data []byte // Rows * RowBytes() bytes
}

// RowBytes returns the encoded size of one row.
func (w *Weight) RowBytes() int {
	n, _ := w.Type.RowBytes(uint64(w.Cols))
	return int(n)
}

// Row returns the encoded bytes of row r.
func (w *Weight) Row(r int) []byte {
	rb := w.RowBytes()
	return w.Data[r*rb : (r+1)*rb]
}

// RowRange returns rows lo..hi-1 of w as a matrix of its own: a view sharing
// w's memory, of w's name and type. It panics unless 0 <= lo <= hi <=
// w.Rows.
func (w *Weight) RowRange(lo, hi int) *Weight {
	if lo < 0 || lo > hi || hi > w.Rows {
		panic(fmt.Sprintf("arch: rows %d..%d of %s, which has %d", lo, hi, w.Name, w.Rows))
	}
	rb := w.RowBytes()
	return &Weight{Name: w.Name, Type: w.Type, Rows: hi - lo, Cols: w.Cols, Data: w.Data[lo*rb : hi*rb : hi*rb]}
}

// SupportedType reports whether weights of type t can be loaded: package
// quant knows its format (numfmt.FormatOf). Whether a backend computes with
// it is the backend's to say.
func SupportedType(t gguf.TensorType) bool {
	_, ok := numfmt.FormatOf(t)
	return ok
}

// NewWeight checks a GGUF tensor and views it as a weight matrix of rows x
// cols. The tensor must have shape (cols, rows), a type quant knows, and
// rows of whole blocks.
func NewWeight(t *gguf.TensorInfo, rows, cols int) (*Weight, error) {
	return newWeight(t, rows, cols, 1)
}

// newWeight is NewWeight for experts stacked matrices of rows x cols
// (shape (cols, rows, experts)); experts 1 is a plain matrix.
func newWeight(t *gguf.TensorInfo, rows, cols, experts int) (*Weight, error) {
	f, ok := numfmt.FormatOf(t.Type)
	if !ok {
		return nil, fmt.Errorf("tensor %q: type %s is not supported", t.Name, t.Type)
	}
	want := []uint64{uint64(cols), uint64(rows)}
	if experts > 1 {
		want = append(want, uint64(experts))
	}
	if len(t.Shape) != len(want) || t.Shape[0] != want[0] || t.Shape[1] != want[1] || len(want) == 3 && t.Shape[2] != want[2] {
		return nil, fmt.Errorf("tensor %q: shape %v, want %v", t.Name, t.Shape, want)
	}
	if cols%f.BlockSize != 0 {
		return nil, fmt.Errorf("tensor %q: %d columns are not whole %s blocks of %d", t.Name, cols, t.Type, f.BlockSize)
	}
	return &Weight{Name: t.Name, Type: t.Type, Rows: rows * experts, Cols: cols, Data: t.Data}, nil
}

// Weights are a model's tensors by role: matrices in their file encoding,
// vectors (norm gains, biases) as float32.
type Weights struct {
	Embed      *Weight // RoleEmbed
	Output     *Weight // RoleOutput: Embed itself when the head is tied
	OutputNorm []float32
	Layers     []Layer
}

// Layer holds one layer's tensors by role.
type Layer struct {
	mats [numRoles]*Weight
	vecs [numRoles][]float32
}

// Matrix returns the layer's matrix of role r, or nil if it has none.
func (l *Layer) Matrix(r Role) *Weight {
	if r >= numRoles {
		return nil
	}
	return l.mats[r]
}

// Vector returns the layer's vector of role r, or nil if it has none.
func (l *Layer) Vector(r Role) []float32 {
	if r >= numRoles {
		return nil
	}
	return l.vecs[r]
}

// SetMatrix makes w the layer's matrix of role r.
func (l *Layer) SetMatrix(r Role, w *Weight) { l.mats[r] = w }

// SetVector makes v the layer's vector of role r.
func (l *Layer) SetVector(r Role, v []float32) { l.vecs[r] = v }

// Matrices returns every weight matrix of the model, each once (a tied
// output head is the embedding): the embedding, the head, then each
// layer's in the order its operations read them.
func (w *Weights) Matrices() []*Weight {
	ws := []*Weight{w.Embed}
	if w.Output != w.Embed {
		ws = append(ws, w.Output)
	}
	for i := range w.Layers {
		for _, m := range w.Layers[i].mats {
			if m != nil {
				ws = append(ws, m)
			}
		}
	}
	return ws
}

// ComputeMatrices returns the matrices a backend multiplies with: all of
// Matrices but the embedding, which is only read row by row (dequantized
// with package numfmt), unless it is also the output head.
func (w *Weights) ComputeMatrices() []*Weight {
	ws := w.Matrices()
	if w.Output != w.Embed {
		ws = ws[1:]
	}
	return ws
}

// ReadBytes returns the number of weight bytes one decode step of a dense
// model reads: every layer tensor, the final norm and the output head (of
// the embedding, one row).
func (w *Weights) ReadBytes() int64 {
	n := int64(len(w.Output.Data)) + 4*int64(len(w.OutputNorm))
	for i := range w.Layers {
		l := &w.Layers[i]
		for r := range numRoles {
			if m := l.mats[r]; m != nil {
				n += int64(len(m.Data))
			}
			n += 4 * int64(len(l.vecs[r]))
		}
	}
	return n
}

// A Model is a loaded model as a backend sees it: the description of its
// forward pass and its weights. Model packages implement it; backends take
// it and import no model package.
type Model interface {
	// Hyper returns the hyperparameters and options.
	Hyper() *Config
	// Plan returns the steps of a forward pass (NewPlan). The slice is
	// shared: do not modify it.
	Plan() []Step
	// Tensors returns the weights by role.
	Tensors() *Weights
}

// Check returns an error, in one line, if w does not hold the weights of
// a model of c: the embedding, the final norm, the head (the embedding
// itself when c.TiedOutput) and every layer's tensors of c.LayerRoles(),
// each of its role's shape.
func (w *Weights) Check(c *Config) error {
	if len(w.Layers) != c.Layers {
		return fmt.Errorf("%s: weights of %d layers, the configuration has %d", c.Arch, len(w.Layers), c.Layers)
	}
	if c.TiedOutput != (w.Output == w.Embed) {
		return fmt.Errorf("%s: the output head is tied %v, the configuration says %v", c.Arch, w.Output == w.Embed, c.TiedOutput)
	}
	if err := checkMatrix(c, RoleEmbed, -1, w.Embed); err != nil {
		return err
	}
	if err := checkMatrix(c, RoleOutput, -1, w.Output); err != nil {
		return err
	}
	if err := checkVector(c, RoleOutputNorm, -1, w.OutputNorm); err != nil {
		return err
	}
	roles := c.LayerRoles()
	for i := range w.Layers {
		l := &w.Layers[i]
		for _, r := range roles {
			var err error
			if r.Vector() {
				err = checkVector(c, r, i, l.vecs[r])
			} else {
				err = checkMatrix(c, r, i, l.mats[r])
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func checkMatrix(c *Config, r Role, layer int, w *Weight) error {
	rows, cols, experts := c.Shape(r)
	switch {
	case w == nil:
		return fmt.Errorf("%s: no %v weights%s", c.Arch, r, inLayer(layer))
	case w.Rows != rows*experts || w.Cols != cols:
		return fmt.Errorf("%s: %v weights%s are %dx%d, want %dx%d", c.Arch, r, inLayer(layer), w.Rows, w.Cols, rows*experts, cols)
	}
	return nil
}

func checkVector(c *Config, r Role, layer int, v []float32) error {
	if rows, _, experts := c.Shape(r); len(v) != rows*experts {
		n := rows * experts
		return fmt.Errorf("%s: %d %v values%s, want %d", c.Arch, len(v), r, inLayer(layer), n)
	}
	return nil
}

func inLayer(i int) string {
	if i < 0 {
		return ""
	}
	return fmt.Sprintf(" in layer %d", i)
}
