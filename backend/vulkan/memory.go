package vulkan

import (
	"fmt"
	"unsafe"

	"inferno/backend/vulkan/vk"
)

// stagingBytes is the host-visible buffer Write and Read go through, in
// chunks of this size.
const stagingBytes = 32 << 20

// A Buffer is device memory with a device address. Host buffers are
// mapped: Host gives their bytes, which the GPU reads and writes
// coherently (per-step inputs, results read back).
type Buffer struct {
	d    *Device
	buf  uint64
	mem  uint64
	size int64
	addr uint64
	host []byte
}

// Addr returns the buffer's device address, which shaders take in their
// push constants.
func (b *Buffer) Addr() uint64 { return b.addr }

// Size returns the buffer's size in bytes.
func (b *Buffer) Size() int64 { return b.size }

// Host returns a host buffer's mapped bytes (nil for a device buffer).
func (b *Buffer) Host() []byte { return b.host }

// NewBuffer allocates size bytes of device-local memory.
func (d *Device) NewBuffer(size int64) (*Buffer, error) { return d.newBuffer(size, false) }

// NewHostBuffer allocates size bytes of host-visible, coherent memory
// that shaders read and write through its address and the host through
// Host.
func (d *Device) NewHostBuffer(size int64) (*Buffer, error) { return d.newBuffer(size, true) }

func (d *Device) newBuffer(size int64, host bool) (*Buffer, error) {
	if size <= 0 {
		size = 4
	}
	size = (size + 15) &^ 15
	ci := &vk.BufferCreateInfo{SType: vk.StructureTypeBufferCreateInfo, Size: uint64(size),
		Usage: vk.BufferUsageStorageBuffer | vk.BufferUsageShaderDeviceAddress | vk.BufferUsageTransferSrc | vk.BufferUsageTransferDst}
	buf, err := d.dev.CreateBuffer(ci)
	if err != nil {
		return nil, fmt.Errorf("buffer of %d bytes: %w", size, err)
	}
	req := d.dev.BufferMemoryRequirements(buf)
	want := uint32(vk.MemoryPropertyDeviceLocal)
	if host {
		want = vk.MemoryPropertyHostVisible | vk.MemoryPropertyHostCoherent
	}
	ti, ok := d.memoryType(req.MemoryTypeBits, want)
	if !ok {
		d.dev.DestroyBuffer(buf)
		return nil, fmt.Errorf("buffer of %d bytes: no memory type with properties %#x", size, want)
	}
	var pin vk.Pinner
	defer pin.Unpin()
	flags := &vk.MemoryAllocateFlagsInfo{SType: vk.StructureTypeMemoryAllocateFlagsInfo, Flags: vk.MemoryAllocateDeviceAddress}
	ai := &vk.MemoryAllocateInfo{SType: vk.StructureTypeMemoryAllocateInfo, PNext: vk.Ptr(&pin, flags), AllocationSize: req.Size, MemoryTypeIndex: ti}
	mem, err := d.dev.AllocateMemory(ai)
	if err != nil {
		d.dev.DestroyBuffer(buf)
		return nil, fmt.Errorf("buffer of %d bytes: %w", size, err)
	}
	b := &Buffer{d: d, buf: buf, mem: mem, size: size}
	if err := d.dev.BindBufferMemory(buf, mem, 0); err != nil {
		b.Free()
		return nil, err
	}
	b.addr = d.dev.BufferAddress(buf)
	if host {
		p, err := d.dev.MapMemory(mem, 0, uint64(size))
		if err != nil {
			b.Free()
			return nil, err
		}
		b.host = unsafe.Slice((*byte)(hostPtr(p)), size)
	}
	return b, nil
}

// memoryType picks the first memory type allowed by bits with the
// properties want.
func (d *Device) memoryType(bits, want uint32) (uint32, bool) {
	for i := range d.memTypes.MemoryTypeCount {
		if bits&(1<<i) != 0 && d.memTypes.MemoryTypes[i].PropertyFlags&want == want {
			return i, true
		}
	}
	return 0, false
}

// Free releases the buffer; nil and freed buffers are ignored.
func (b *Buffer) Free() {
	if b == nil || b.buf == 0 {
		return
	}
	if b.d.lost != nil { // the GPU may still use it (Device.lost)
		b.buf, b.mem, b.host = 0, 0, nil
		return
	}
	if b.host != nil {
		b.d.dev.UnmapMemory(b.mem)
		b.host = nil
	}
	b.d.dev.DestroyBuffer(b.buf)
	b.d.dev.FreeMemory(b.mem)
	b.buf, b.mem = 0, 0
}

// Write copies src into b at byte offset off (blocking: through the
// staging buffer for device buffers).
func (d *Device) Write(b *Buffer, off int64, src []byte) error {
	if off < 0 || off+int64(len(src)) > b.size {
		return fmt.Errorf("vulkan: write of %d bytes at %d into a buffer of %d", len(src), off, b.size)
	}
	if b.host != nil {
		copy(b.host[off:], src)
		return nil
	}
	for len(src) > 0 {
		n := min(len(src), stagingBytes)
		copy(d.staging.host, src[:n])
		if err := d.copyBuffer(d.staging, b, 0, off, int64(n)); err != nil {
			return err
		}
		src, off = src[n:], off+int64(n)
	}
	return nil
}

// Read copies len(dst) bytes of b from byte offset off into dst.
func (d *Device) Read(b *Buffer, off int64, dst []byte) error {
	if off < 0 || off+int64(len(dst)) > b.size {
		return fmt.Errorf("vulkan: read of %d bytes at %d from a buffer of %d", len(dst), off, b.size)
	}
	if b.host != nil {
		copy(dst, b.host[off:])
		return nil
	}
	for len(dst) > 0 {
		n := min(len(dst), stagingBytes)
		if err := d.copyBuffer(b, d.staging, off, 0, int64(n)); err != nil {
			return err
		}
		copy(dst[:n], d.staging.host)
		dst, off = dst[n:], off+int64(n)
	}
	return nil
}

// copyBuffer copies n bytes between buffers and waits.
func (d *Device) copyBuffer(src, dst *Buffer, srcOff, dstOff, n int64) error {
	r, err := d.Begin()
	if err != nil {
		return err
	}
	d.dev.CmdCopyBuffer(r.cb, src.buf, dst.buf, uint64(srcOff), uint64(dstOff), uint64(n))
	return d.Submit(r)
}

// Fill sets n bytes of b from off (multiples of 4) to the 32-bit word v.
func (d *Device) Fill(b *Buffer, off, n int64, v uint32) error {
	r, err := d.Begin()
	if err != nil {
		return err
	}
	d.dev.CmdFillBuffer(r.cb, b.buf, uint64(off), uint64(n), v)
	return d.Submit(r)
}

// hostPtr turns an address the driver returned (mapped memory, never
// Go's) into a pointer.
func hostPtr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
