package convert

import (
	"fmt"
	"slices"
	"strings"

	"inferno/family"
)

// A view is where the data of one output tensor lie in the checkpoint:
// whole slices of its tensors written one after the other (segs), or rows
// gathered one by one (rows > 0: transposed, interleaved or permuted
// sources), or MXFP4 blocks repacked (blocks).
type view struct {
	dtype DType
	segs  []segment

	// The gathered layout: the output has experts x rows rows of cols
	// values; output row (e, r) is row r' of expert e's matrix of src,
	// which has rows*of rows (or, transposed, is stored cols x rows*of):
	// r' = r*of+part interleaved, part*rows+r otherwise, after the head
	// permutation (heads).
	src                    tensorRef
	experts, rows, cols    int
	of, part               int
	interleaved, transpose bool
	heads                  int

	// MXFP4: blocks (rows*of x nb x 16 bytes an expert) and scales
	// (rows*of x nb), cols = 32*nb values a row.
	blocks, scales tensorRef
}

// segment is a contiguous part of a source tensor's data.
type segment struct {
	ref  tensorRef
	data []byte
}

// sourceNames returns every checkpoint tensor name a source of experts
// experts may read, for the check that the checkpoint holds nothing else.
func sourceNames(s family.Source, experts int) []string {
	var out []string
	for p := &s; p != nil && p.Name != ""; p = p.Else {
		switch {
		case p.MXFP4:
			out = append(out, p.Name+"_blocks", p.Name+"_scales")
		case p.Stacked():
			for e := range experts {
				out = append(out, p.Expert(e))
			}
		default:
			out = append(out, p.Name)
		}
	}
	return out
}

// resolve finds the data of spec's tensor (of experts experts when
// stacked) in the checkpoint, checking types and shapes: spec.src, or
// the first of its Else chain whose tensors the checkpoint has.
func (c *checkpoint) resolve(spec *tensorSpec) (*view, error) {
	s := spec.src
	for s.Else != nil && !c.has(s) {
		s = *s.Else
	}
	switch {
	case s.MXFP4:
		return c.resolveMXFP4(spec, s)
	case s.Stacked():
		return c.resolveStack(spec, s)
	}
	ref, ok := c.tensors[s.Name]
	if !ok {
		return nil, fmt.Errorf("tensor %q is missing", s.Name)
	}
	t := ref.t
	if _, ok := sourceTypes[t.DType]; !ok {
		return nil, fmt.Errorf("tensor %q has dtype %s; only F32, F16 and BF16 can be converted", s.Name, t.DType)
	}
	want := slices.Clone(spec.shape)
	if spec.srcRows != 0 {
		want[0] = spec.srcRows
	}
	// The output's matrix of each expert: rows x cols (a vector: rows
	// x 1), and the experts.
	stacked := len(want) == 3 || (len(want) == 2 && isVectorStack(spec))
	experts, rows, cols := 1, want[0], int64(1)
	dims := want
	if stacked {
		experts, dims = int(want[0]), want[1:]
	}
	rows = dims[0]
	if len(dims) > 1 {
		cols = dims[1]
	}
	of := max(s.Of, 1)
	if s.Part < 0 || s.Part >= of {
		return nil, fmt.Errorf("tensor %q: part %d of %d", s.Name, s.Part, of)
	}
	// The checkpoint's shape: rows*of rows, transposed or not.
	var srcShape []int64
	if stacked {
		srcShape = append(srcShape, int64(experts))
	}
	switch {
	case s.Transposed && len(dims) == 2:
		srcShape = append(srcShape, cols, rows*int64(of))
	case len(dims) == 2:
		srcShape = append(srcShape, rows*int64(of), cols)
	default:
		srcShape = append(srcShape, rows*int64(of))
	}
	if !slices.Equal(t.Shape, srcShape) {
		return nil, fmt.Errorf("tensor %q has shape %v, config.json implies %v", s.Name, t.Shape, srcShape)
	}
	if int64(len(t.Data)) != t.Elements()*int64(t.DType.Size()) {
		return nil, fmt.Errorf("tensor %q has %d bytes for %d values", s.Name, len(t.Data), t.Elements())
	}
	v := &view{dtype: t.DType}
	es := int64(t.DType.Size())
	if spec.srcRows != 0 {
		// The first rows only.
		v.segs = []segment{{ref, t.Data[:spec.shape[0]*cols*es]}}
		return v, nil
	}
	if !s.Transposed && (of == 1 || !s.Interleaved) && spec.heads == 0 {
		// Each expert's part is one run of rows.
		per := rows * int64(of) * cols * es
		for e := range int64(experts) {
			off := e*per + int64(s.Part)*rows*cols*es
			v.segs = append(v.segs, segment{ref, t.Data[off : off+rows*cols*es]})
		}
		return v, nil
	}
	v.src, v.experts, v.rows, v.cols = ref, experts, int(rows), int(cols)
	v.of, v.part, v.interleaved, v.transpose, v.heads = of, s.Part, s.Interleaved, s.Transposed, spec.heads
	if v.heads > 0 && (v.rows%v.heads != 0 || (v.rows/v.heads)%2 != 0) {
		return nil, fmt.Errorf("tensor %q: shape %v: rows are not %d heads of pairs", s.Name, t.Shape, v.heads)
	}
	return v, nil
}

// isVectorStack reports whether a 2-D output tensor is a stack of
// experts' vectors (their biases) rather than a matrix.
func isVectorStack(spec *tensorSpec) bool {
	return !strings.HasSuffix(spec.gguf, ".weight")
}

// has reports whether the checkpoint has the tensors of s itself (not of
// its Else).
func (c *checkpoint) has(s family.Source) bool {
	switch {
	case s.MXFP4:
		_, ok := c.tensors[s.Name+"_blocks"]
		return ok
	case s.Stacked():
		_, ok := c.tensors[s.Expert(0)]
		return ok
	}
	_, ok := c.tensors[s.Name]
	return ok
}

// resolveStack views the tensors of a stacked source, one an expert, of
// one dtype and the shape of an expert's slice of spec.
func (c *checkpoint) resolveStack(spec *tensorSpec, s family.Source) (*view, error) {
	slice := spec.shape[1:]
	v := &view{}
	for e := range int(spec.shape[0]) {
		name := s.Expert(e)
		ref, ok := c.tensors[name]
		switch {
		case !ok:
			return nil, fmt.Errorf("tensor %q is missing", name)
		case !slices.Equal(ref.t.Shape, slice):
			return nil, fmt.Errorf("tensor %q has shape %v, config.json implies %v", name, ref.t.Shape, slice)
		case e > 0 && ref.t.DType != v.dtype:
			return nil, fmt.Errorf("tensor %q has dtype %s, %q has %s", name, ref.t.DType, s.Expert(0), v.dtype)
		}
		if _, ok := sourceTypes[ref.t.DType]; !ok {
			return nil, fmt.Errorf("tensor %q has dtype %s; only F32, F16 and BF16 can be converted", name, ref.t.DType)
		}
		v.dtype = ref.t.DType
		v.segs = append(v.segs, segment{ref, ref.t.Data})
	}
	return v, nil
}

// resolveMXFP4 views the blocks and scales of an MXFP4 source: for an
// output of experts x rows x cols, NAME_blocks is experts x rows*of x
// cols/32 x 16 bytes and NAME_scales experts x rows*of x cols/32, both
// U8.
func (c *checkpoint) resolveMXFP4(spec *tensorSpec, s family.Source) (*view, error) {
	if len(spec.shape) != 3 {
		return nil, fmt.Errorf("tensor %q: MXFP4 blocks for a tensor of shape %v (want a stack of experts' matrices)", s.Name, spec.shape)
	}
	e, rows, cols := spec.shape[0], spec.shape[1], spec.shape[2]
	if cols%32 != 0 {
		return nil, fmt.Errorf("tensor %q: rows of %d values are not whole MXFP4 blocks of 32", s.Name, cols)
	}
	of := int64(max(s.Of, 1))
	nb := cols / 32
	v := &view{dtype: U8, experts: int(e), rows: int(rows), cols: int(cols), of: int(of), part: s.Part, interleaved: s.Interleaved}
	for _, p := range []struct {
		suffix string
		shape  []int64
		dst    *tensorRef
	}{
		{"_blocks", []int64{e, rows * of, nb, 16}, &v.blocks},
		{"_scales", []int64{e, rows * of, nb}, &v.scales},
	} {
		name := s.Name + p.suffix
		ref, ok := c.tensors[name]
		switch {
		case !ok:
			return nil, fmt.Errorf("tensor %q is missing", name)
		case ref.t.DType != U8:
			return nil, fmt.Errorf("tensor %q has dtype %s; MXFP4 blocks and scales are U8", name, ref.t.DType)
		case !slices.Equal(ref.t.Shape, p.shape):
			return nil, fmt.Errorf("tensor %q has shape %v, config.json implies %v", name, ref.t.Shape, p.shape)
		case int64(len(ref.t.Data)) != ref.t.Elements():
			return nil, fmt.Errorf("tensor %q has %d bytes for %d values", name, len(ref.t.Data), ref.t.Elements())
		}
		*p.dst = ref
	}
	return v, nil
}

// srcRow returns the row of expert e's matrix in the source that output
// row r comes from.
func (v *view) srcRow(r int) int {
	if v.heads > 0 {
		r = permuteRow(r, v.rows, v.heads)
	}
	switch {
	case v.of <= 1:
		return r
	case v.interleaved:
		return r*v.of + v.part
	}
	return v.part*v.rows + r
}

// appendRow appends output row r of expert e, in the source's dtype.
func (v *view) appendRow(dst []byte, e, r int) []byte {
	es := v.dtype.Size()
	data := v.src.t.Data
	sr := v.srcRow(r)
	all := v.rows * max(v.of, 1) // the source's rows of an expert
	if !v.transpose {
		off := ((e*all + sr) * v.cols) * es
		return append(dst, data[off:off+v.cols*es]...)
	}
	base := e * v.cols * all
	for k := range v.cols {
		off := (base + k*all + sr) * es
		dst = append(dst, data[off:off+es]...)
	}
	return dst
}

// appendMXFP4Row appends output row r of expert e as ggml's MXFP4 blocks:
// for each block of 32 values its E8M0 scale, then 16 bytes whose byte j
// holds value j in its low nibble and value j+16 in its high one
// (llama.cpp's transform_nibble_layout); the checkpoint's byte j holds
// values 2j and 2j+1.
func (v *view) appendMXFP4Row(dst []byte, e, r int) []byte {
	nb := v.cols / 32
	sr := e*v.rows*max(v.of, 1) + v.srcRow(r)
	blocks := v.blocks.t.Data[sr*nb*16 : (sr+1)*nb*16]
	scales := v.scales.t.Data[sr*nb : (sr+1)*nb]
	for b := range nb {
		dst = append(dst, scales[b])
		dst = repackMXFP4(dst, blocks[16*b:16*b+16])
	}
	return dst
}

// repackMXFP4 appends the 16 bytes of one block of 32 4-bit values in
// ggml's order (byte j: values j and j+16) from OpenAI's (byte j: values
// 2j and 2j+1, the even one in the low nibble).
func repackMXFP4(dst, q []byte) []byte {
	for j := range 16 {
		lo := nibble(q, j)
		hi := nibble(q, j+16)
		dst = append(dst, lo|hi<<4)
	}
	return dst
}

// nibble returns value i of a block in OpenAI's order.
func nibble(q []byte, i int) byte {
	b := q[i/2]
	if i%2 == 1 {
		return b >> 4
	}
	return b & 0x0f
}

// elements returns the number of values of the output.
func (v *view) elements() int64 {
	if v.segs != nil {
		var n int64
		for _, s := range v.segs {
			n += int64(len(s.data) / v.dtype.Size())
		}
		return n
	}
	return int64(v.experts) * int64(v.rows) * int64(v.cols)
}

// release gives the pages of the view's sources back to the kernel.
func (v *view) release() {
	for _, ref := range []tensorRef{v.src, v.blocks, v.scales} {
		if ref.file != nil {
			ref.file.release(ref.t.Data)
		}
	}
}

// textOnly applies llama.cpp's TextModel.filter_tensors to every
// checkpoint: the tensors of a multimodal model's vision or audio parts
// and projectors are left out, and "language_model." is dropped from the
// names (a multimodal model's language model, such as
// Gemma3ForConditionalGeneration's, is then a text model's). A name that
// would clash with another is left as it is.
func (c *checkpoint) textOnly() {
	for name, ref := range c.tensors {
		if multimodal(name) {
			delete(c.tensors, name)
			continue
		}
		if !strings.Contains(name, "language_model.") {
			continue
		}
		short := strings.ReplaceAll(name, "language_model.", "")
		if _, clash := c.tensors[short]; clash {
			continue
		}
		delete(c.tensors, name)
		c.tensors[short] = ref
	}
}

// multimodal reports whether llama.cpp's converter leaves a tensor out of
// a text model as part of a vision, audio or speech model.
func multimodal(name string) bool {
	for _, p := range []string{"mlp", "vit.", "vpm.", "siglip2.", "conformer.", "merger.", "resampler.", "sound_encoder.", "sound_projection.", "speech_embeddings."} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, s := range []string{"visual.", "vision.", "audio.", "talker.", "vision_", "audio_", "sam_model", "token2wav.", "code2wav.",
		"projector.", "pre_mm_projector_norm", "image_newline", "view_seperator", "patch_embed", "patch_embedding", "patch_merger.", "model.connector."} {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}
