package kvcache

import (
	"fmt"
	"unsafe"
)

// Pages is a CPU backend's storage for a paged cache: for every layer one
// buffer of keys and one of values, each holding blocks blocks of
// blockSize positions of dim values, block b from value b*blockSize*dim
// (inside a block, the backend's layout: head-major, backend.KVIndex).
// Which block holds which positions of which
// sequence is a Manager's business. The buffers are mapped at once, apart
// from the Go heap (the collector neither scans them nor counts them
// towards its next cycle), and the operating system backs their pages only
// as blocks are first written, so a large pool costs memory only as it
// fills. Close unmaps them.
type Pages struct {
	typ               Type
	layers, dim       int
	blocks, blockSize int
	mem               []byte      // the mapping all buffers view
	k, v              [][]float32 // F32 buffers, per layer
	kh, vh            [][]uint16  // F16 buffers, per layer
}

// NewPages returns storage for blocks blocks of blockSize positions of
// dim values per layer. It fails if the memory cannot be mapped, and
// panics on an unknown type or a size below 1.
func NewPages(layers, dim, blocks, blockSize int, typ Type) (*Pages, error) {
	if layers < 1 || dim < 1 || blocks < 1 || blockSize < 1 {
		panic(fmt.Sprintf("kvcache: pages of %d layers, %d values, %d blocks of %d positions", layers, dim, blocks, blockSize))
	}
	if typ != F32 && typ != F16 {
		panic(fmt.Sprintf("kvcache: unknown element type %v", typ))
	}
	p := &Pages{typ: typ, layers: layers, dim: dim, blocks: blocks, blockSize: blockSize}
	size := blocks * blockSize * dim // values per buffer
	mem, err := mapMemory(int64(2*layers) * int64(size) * int64(typ.Size()))
	if err != nil {
		return nil, fmt.Errorf("kvcache: a pool of %d blocks (%d bytes): %w", blocks, p.Bytes(), err)
	}
	p.mem = mem
	buf := func(i int) unsafe.Pointer { return unsafe.Pointer(&mem[i*size*typ.Size()]) }
	if typ == F32 {
		p.k, p.v = make([][]float32, layers), make([][]float32, layers)
		for l := range layers {
			p.k[l] = unsafe.Slice((*float32)(buf(2*l)), size)
			p.v[l] = unsafe.Slice((*float32)(buf(2*l+1)), size)
		}
	} else {
		p.kh, p.vh = make([][]uint16, layers), make([][]uint16, layers)
		for l := range layers {
			p.kh[l] = unsafe.Slice((*uint16)(buf(2*l)), size)
			p.vh[l] = unsafe.Slice((*uint16)(buf(2*l+1)), size)
		}
	}
	return p, nil
}

// Close unmaps the buffers; the storage must not be used afterwards.
// Closing twice is a no-op.
func (p *Pages) Close() error {
	if p.mem == nil {
		return nil
	}
	mem := p.mem
	p.mem, p.k, p.v, p.kh, p.vh = nil, nil, nil, nil, nil
	return unmapMemory(mem)
}

// PageBytes returns the bytes one block takes, keys and values of every
// layer, for dim values per position per layer.
func PageBytes(layers, dim, blockSize int, typ Type) int64 {
	return 2 * int64(layers) * int64(blockSize) * int64(dim) * int64(typ.Size())
}

// Type returns the element type of the keys and values.
func (p *Pages) Type() Type { return p.typ }

// Blocks returns the number of blocks.
func (p *Pages) Blocks() int { return p.blocks }

// BlockSize returns the positions a block holds.
func (p *Pages) BlockSize() int { return p.blockSize }

// Bytes returns the memory the buffers span.
func (p *Pages) Bytes() int64 {
	return int64(p.blocks) * PageBytes(p.layers, p.dim, p.blockSize, p.typ)
}

// LayerF32 returns layer l's key and value buffers. It panics unless the
// storage is of type F32.
func (p *Pages) LayerF32(l int) (k, v []float32) {
	if p.typ != F32 {
		panic(fmt.Sprintf("kvcache: LayerF32 of %v pages", p.typ))
	}
	return p.k[l], p.v[l]
}

// LayerF16 returns layer l's key and value buffers of half-precision
// bits. It panics unless the storage is of type F16.
func (p *Pages) LayerF16(l int) (k, v []uint16) {
	if p.typ != F16 {
		panic(fmt.Sprintf("kvcache: LayerF16 of %v pages", p.typ))
	}
	return p.kh[l], p.vh[l]
}

// CopyBlock copies every row of block src into block dst, keys and values
// of every layer. It implements Copier.
func (p *Pages) CopyBlock(dst, src int32) error {
	if p.mem == nil {
		return fmt.Errorf("kvcache: copy in closed pages")
	}
	if dst < 0 || src < 0 || int(dst) >= p.blocks || int(src) >= p.blocks {
		return fmt.Errorf("kvcache: copy of block %d to %d in a pool of %d", src, dst, p.blocks)
	}
	n := p.blockSize * p.dim
	d, s := int(dst)*n, int(src)*n
	for l := range p.layers {
		if p.typ == F32 {
			copy(p.k[l][d:d+n], p.k[l][s:s+n])
			copy(p.v[l][d:d+n], p.v[l][s:s+n])
		} else {
			copy(p.kh[l][d:d+n], p.kh[l][s:s+n])
			copy(p.vh[l][d:d+n], p.vh[l][s:s+n])
		}
	}
	return nil
}
