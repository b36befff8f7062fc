package cuda

import "inferno/batch"

// Inputs of a pass ("meta": one int32 array, page-locked on the host and
// copied to the device): a header of 4 ints (the ints the first kernel of
// a decode graph copies, 1 when the step samples on the GPU so that the
// argmax kernels return at once (skipArgmax), the step number, and for a
// lookahead step the number of tokens to take from the device's argmax),
// then per token its id, position and table offset (an index into the
// same array, where the sequence's block table was copied), for a model
// with a window pool per token its table offset there (the local layers'
// toff: tokArrays), and for other passes the decode token list, the
// prefill tiles (first token, count) and the output rows. The tables
// follow, each cut to the blocks its run reaches (a sequence's window pool
// table after its main one, or none: its local offsets are then its main
// ones); then, for a step sampled on the GPU, its rows' parameters
// (metaRows).
//
// A decode step of bucket B has its arrays at fixed places (its graph
// holds their addresses): ids at 4, positions at 4+B, table offsets at
// 4+2B, window pool table offsets at 4+3B with a window pool; the sampling
// rows of a graph that samples (rowsOff); then the scratch table (one
// entry: the scratch block; two with a window pool: its scratch block
// after), which the padding tokens' offsets name, and the tables.
const metaStep = 2 // the header's step number

// metaInts is the size of the inputs of n tokens with tab table entries
// (the window pool's tables counted in tab): a header, per token the id,
// position and table offset (and the window pool's table offset with
// one), the decode list, the prefill tiles (two ints each, at most one per
// token), the output rows, one scratch table entry per pool and the
// tables, rounded up to 4.
func (br *BatchRunner) metaInts(n, tab int) int {
	if br.win {
		return roundUp(4+8*n+2+tab+4, 4)
	}
	return roundUp(4+7*n+1+tab+4, 4)
}

// tokArrays returns the per-token arrays of a pass's inputs: id, position
// and table offset, and with a window pool its table offset.
func (br *BatchRunner) tokArrays() int {
	if br.win {
		return 4
	}
	return 3
}

// rowsOff is the index in a decode step's inputs of what follows its
// per-token arrays (tokArrays of B ints after the header): the sampling
// rows of a graph that samples, else the scratch table.
func (br *BatchRunner) rowsOff(B int) int { return 4 + br.tokArrays()*B }

// fillDecode writes the inputs of a decode step of b's tokens, padded to
// B, into slot s: for d = 0 b's tokens at their positions; for d = 1 (a
// lookahead step) the next positions, with the tokens to be taken from
// the device's argmax. It returns the ints to copy and the step's number,
// or 0 when (d = 1) some sequence's table does not reach its next position
// with a valid block, the next position passes MaxLen or the inputs would
// not fit: then nothing is written. With a window pool the same holds of
// the sequence's table there.
func (br *BatchRunner) fillDecode(s int, b *batch.Batch, B, d int, rows bool) (int, int32) {
	n := b.Len()
	tab0 := br.rowsOff(B)
	if rows {
		tab0 += rowInts * B // the sampling rows (rowsDev)
	}
	ntab := 1 // tables a sequence copies
	k := tab0 + 1
	if br.win {
		k++ // the window pool's scratch entry
		if len(b.LocalTables) != 0 {
			ntab = 2
		}
	}
	k0 := k
	for t := range n {
		p := int(b.Pos[t]) + d
		need := p/br.bs + 1
		if d == 1 {
			if p >= br.base.maxLen || !reaches(b.Tables[b.Seq[t]], need, br.blocks) ||
				br.win && !reaches(br.localTable(b, b.Seq[t]), need, br.localBlocks) {
				return 0, 0
			}
		}
		k += ntab * need
	}
	total := roundUp(k, 4)
	if total > br.metaCap {
		return 0, 0
	}
	m := hostInts(br.hmetaSlot(s), br.metaCap)
	k = k0
	m[tab0] = br.scratch
	if br.win {
		m[tab0+1] = br.lscratch
	}
	for t := range n {
		p := int(b.Pos[t]) + d
		need := p/br.bs + 1
		tok := b.Tokens[t]
		if d == 1 {
			tok = 0 // bembed_dec takes it from the device
		}
		m[4+t], m[4+B+t], m[4+2*B+t] = tok, int32(p), int32(k)
		copy(m[k:k+need], b.Tables[b.Seq[t]][:need])
		k += need
		if br.win {
			m[4+3*B+t] = m[4+2*B+t]
			if ntab == 2 {
				m[4+3*B+t] = int32(k)
				copy(m[k:k+need], b.LocalTables[b.Seq[t]][:need])
				k += need
			}
		}
	}
	for t := n; t < B; t++ {
		m[4+t], m[4+B+t], m[4+2*B+t] = 0, 0, int32(tab0)
		if br.win {
			m[4+3*B+t] = int32(tab0 + 1)
		}
	}
	br.step++
	m[0], m[1], m[metaStep], m[3] = 0, 0, br.step, int32(d*n)
	br.metaLen[s] = total
	return total, br.step
}

// aheadMatches tells whether b is the batch lookahead step a ran: its
// tokens the last step's argmax ids, at the positions a ran, each
// sequence's table the blocks a read (the same sequences in the same
// order, as far as the computation can tell). In the window pool only the
// entries of each token's window count: a block before it, freed since
// (a Hole now), was not read.
func (br *BatchRunner) aheadMatches(b *batch.Batch, a lookahead) bool {
	if len(br.ids) != a.n {
		return false
	}
	m := hostInts(br.hmetaSlot(a.slot), br.metaCap)
	for t := range a.n {
		if b.Tokens[t] != br.ids[t] || b.Pos[t] != m[4+a.B+t] {
			return false
		}
		p := int(b.Pos[t])
		need := p/br.bs + 1
		off := int(m[4+2*a.B+t])
		for i, blk := range b.Tables[b.Seq[t]][:need] {
			if m[off+i] != blk {
				return false
			}
		}
		if !br.win {
			continue
		}
		off = int(m[4+3*a.B+t])
		lt := br.localTable(b, b.Seq[t])
		for i := max(0, p-br.cfg.Window+1) / br.bs; i < need; i++ {
			if m[off+i] != lt[i] {
				return false
			}
		}
	}
	return true
}

// generalInputs are where fillGeneral put a pass's arrays in its inputs,
// and the ints to copy.
type generalInputs struct {
	tok, pos, toff, ltoff, dec, tile, out, hid, total int
}

// fillGeneral writes the inputs of a pass of b's tokens (general: ndec
// decode tokens, ntiles prompt tiles of qt tokens) into slot 0: ids,
// positions, table offsets (and with a window pool those of its tables:
// the main tables' without LocalTables), the decode list, the tiles, the
// output and hidden rows, then each run's tables.
func (br *BatchRunner) fillGeneral(b *batch.Batch, qt, ndec, ntiles int) generalInputs {
	n := b.Len()
	m := hostInts(br.hmetaSlot(0), br.metaCap)
	tokOff, posOff, toffOff, ltoffOff := 4, 4+n, 4+2*n, 4+3*n
	nout := len(b.Outputs)
	decOff := 4 + br.tokArrays()*n
	tileOff := decOff + ndec
	outOff := tileOff + 2*ntiles
	hidOff := outOff + nout
	k := hidOff + len(b.Hidden)
	copy(m[tokOff:], b.Tokens)
	copy(m[posOff:], b.Pos)
	copy(m[outOff:], b.Outputs)
	copy(m[hidOff:], b.Hidden)
	nd, nt := 0, 0
	for _, r := range br.runs {
		need := (r.Pos+r.N-1)/br.bs + 1
		copy(m[k:k+need], b.Tables[r.Seq][:need])
		for t := r.Start; t < r.Start+r.N; t++ {
			m[toffOff+t] = int32(k)
		}
		if br.win {
			if len(b.LocalTables) != 0 {
				k += need
				copy(m[k:k+need], b.LocalTables[r.Seq][:need])
			}
			for t := r.Start; t < r.Start+r.N; t++ {
				m[ltoffOff+t] = int32(k) // the main table's without local tables
			}
		}
		k += need
		if r.N == 1 {
			m[decOff+nd] = int32(r.Start)
			nd++
			continue
		}
		for s := 0; s < r.N; s += qt {
			m[tileOff+2*nt], m[tileOff+2*nt+1] = int32(r.Start+s), int32(min(qt, r.N-s))
			nt++
		}
	}
	total := roundUp(k, 4)
	br.step++
	m[0], m[1], m[metaStep], m[3] = 0, 0, br.step, 0
	br.metaLen[0] = total
	return generalInputs{tok: tokOff, pos: posOff, toff: toffOff, ltoff: ltoffOff, dec: decOff, tile: tileOff, out: outOff, hid: hidOff, total: total}
}

// localTable returns sequence s's table in the window pool.
func (br *BatchRunner) localTable(b *batch.Batch, s int32) []int32 {
	if len(b.LocalTables) != 0 {
		return b.LocalTables[s]
	}
	return b.Tables[s]
}

// reaches tells whether tab has need entries, the last a block of a pool
// of blocks blocks.
func reaches(tab []int32, need, blocks int) bool {
	return need <= len(tab) && tab[need-1] >= 0 && int(tab[need-1]) < blocks
}
