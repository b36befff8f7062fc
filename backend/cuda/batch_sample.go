package cuda

// A decode step's sampling on the GPU (sample.go) as the BatchRunner
// queues it: its rows' parameters travel with the step's inputs (one copy
// to the device), and, when the rows have no patches and no masks, its
// kernels are captured into the step's graph after the output head (one
// graph a bucket, variant and kernel set), the rows at a place the bucket
// fixes (rowsDev) and the step number read from the inputs' header.

// sgraphKey names a decode graph with its sampling captured.
type sgraphKey struct{ bi, v, set int }

// sgraph returns the graphs (per slot) of bucket bi, variant v with the
// sampling of kernel set set captured, made empty first when add.
func (br *BatchRunner) sgraph(bi, v, set int, add bool) *[2][2]uintptr {
	k := sgraphKey{bi, v, set}
	gs := br.sgraphs[k]
	if gs == nil && add {
		if br.sgraphs == nil {
			br.sgraphs = map[sgraphKey]*[2][2]uintptr{}
		}
		gs = new([2][2]uintptr)
		br.sgraphs[k] = gs
	}
	return gs
}

// graph returns the executable graph of bucket bi, variant v in slot s,
// with the sampling of kernel set set unless set < 0; 0 if not captured.
func (br *BatchRunner) graph(bi, v, s, set int) uintptr {
	if set < 0 {
		return br.graphs[bi][v][s][1]
	}
	if gs := br.sgraph(bi, v, set, false); gs != nil {
		return gs[s][1]
	}
	return 0
}

// rowsDev is where a decode graph of bucket B with its sampling captured
// reads the rows: after the header and the tokens' ids, positions and
// table offsets (rowsOff; fillDecode leaves the room).
func (br *BatchRunner) rowsDev(B int) uint64 { return br.dmeta + uint64(4*br.rowsOff(B)) }

// sampleInputs completes slot s's inputs (total ints) for a step sampled
// on the GPU (its rows filled): the header's argmax skip (skipArgmax), and
// the rows, at rowsOff padded to the bucket B for a graph with the sampling
// captured (inGraph), else after the inputs when they travel there
// (metaRows). It returns the ints to copy.
func (br *BatchRunner) sampleInputs(s, total, B int, inGraph bool) int {
	hostInts(br.hmetaSlot(s), 2)[1] = br.skipArgmax()
	if !inGraph {
		return br.metaRows(s, total)
	}
	br.samp.putRowsPadded(s, br.hmetaSlot(s)+uintptr(4*br.rowsOff(B)), B)
	br.samp.rowsAt[s] = br.rowsDev(B)
	return total
}

// skipArgmax is the inputs' header field m[1] of a step whose sampling
// on the GPU is queued with it: 1 (samp_final writes the ids), so that
// the argmax kernels (argmax_rows, argmax_final) return at once.
func (br *BatchRunner) skipArgmax() int32 {
	if br.sampNow && !br.samp.old {
		return 1
	}
	return 0
}

// metaRows puts slot s's sampling rows (filled) after the first total
// ints of its inputs, when they travel there (devSampler.inMeta) and fit,
// so that one copy takes both to the device; it returns the ints to copy.
func (br *BatchRunner) metaRows(s, total int) int {
	sm := br.samp
	n := rowInts * sm.nrows[s]
	if !sm.inMeta() || total+n > br.metaCap {
		return total
	}
	sm.putRows(s, br.hmetaSlot(s)+uintptr(4*total))
	sm.rowsAt[s] = br.dmeta + uint64(4*total)
	br.metaLen[s] = total + n
	return total + n
}
