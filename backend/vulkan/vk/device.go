package vk

import (
	"fmt"
	"unsafe"
)

// PhysicalDeviceCooperativeMatrixFeaturesKHR is the C structure of
// VK_KHR_cooperative_matrix (newer than the header gen.go reads).
type PhysicalDeviceCooperativeMatrixFeaturesKHR struct {
	SType                               uint32
	PNext                               uintptr
	CooperativeMatrix                   uint32
	CooperativeMatrixRobustBufferAccess uint32
}

// A Device is a VkDevice with its device-level entry points.
type Device struct {
	Handle uintptr
	fn     deviceFuncs
}

type deviceFuncs struct {
	destroyDevice, getDeviceQueue, deviceWaitIdle, queueSubmit, queueWaitIdle,
	createBuffer, destroyBuffer, getBufferMemoryRequirements, allocateMemory, freeMemory,
	bindBufferMemory, mapMemory, unmapMemory, getBufferDeviceAddress,
	createShaderModule, destroyShaderModule, createPipelineLayout, destroyPipelineLayout,
	createComputePipelines, destroyPipeline, createPipelineCache, destroyPipelineCache, getPipelineCacheData,
	createCommandPool, destroyCommandPool, allocateCommandBuffers, freeCommandBuffers,
	beginCommandBuffer, endCommandBuffer, resetCommandBuffer,
	cmdBindPipeline, cmdPushConstants, cmdDispatch, cmdPipelineBarrier, cmdCopyBuffer, cmdFillBuffer,
	cmdWriteTimestamp, cmdResetQueryPool,
	createFence, destroyFence, waitForFences, resetFences, getFenceStatus,
	createQueryPool, destroyQueryPool, getQueryPoolResults uintptr
}

// CreateDevice creates a logical device on pd from ci (its queue infos,
// extensions and feature chain built by the caller with a Pinner) and
// resolves the device-level entry points.
func (in *Instance) CreateDevice(pd uintptr, ci *DeviceCreateInfo) (*Device, error) {
	var h uintptr
	if err := check("vkCreateDevice", call(in.fn.createDevice, pd, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&h)))); err != nil {
		return nil, err
	}
	d := &Device{Handle: h}
	f := &d.fn
	for _, s := range []struct {
		p    *uintptr
		name string
	}{
		{&f.destroyDevice, "vkDestroyDevice"}, {&f.getDeviceQueue, "vkGetDeviceQueue"},
		{&f.deviceWaitIdle, "vkDeviceWaitIdle"}, {&f.queueSubmit, "vkQueueSubmit"}, {&f.queueWaitIdle, "vkQueueWaitIdle"},
		{&f.createBuffer, "vkCreateBuffer"}, {&f.destroyBuffer, "vkDestroyBuffer"},
		{&f.getBufferMemoryRequirements, "vkGetBufferMemoryRequirements"},
		{&f.allocateMemory, "vkAllocateMemory"}, {&f.freeMemory, "vkFreeMemory"},
		{&f.bindBufferMemory, "vkBindBufferMemory"}, {&f.mapMemory, "vkMapMemory"}, {&f.unmapMemory, "vkUnmapMemory"},
		{&f.getBufferDeviceAddress, "vkGetBufferDeviceAddress"},
		{&f.createShaderModule, "vkCreateShaderModule"}, {&f.destroyShaderModule, "vkDestroyShaderModule"},
		{&f.createPipelineLayout, "vkCreatePipelineLayout"}, {&f.destroyPipelineLayout, "vkDestroyPipelineLayout"},
		{&f.createComputePipelines, "vkCreateComputePipelines"}, {&f.destroyPipeline, "vkDestroyPipeline"},
		{&f.createPipelineCache, "vkCreatePipelineCache"}, {&f.destroyPipelineCache, "vkDestroyPipelineCache"},
		{&f.getPipelineCacheData, "vkGetPipelineCacheData"},
		{&f.createCommandPool, "vkCreateCommandPool"}, {&f.destroyCommandPool, "vkDestroyCommandPool"},
		{&f.allocateCommandBuffers, "vkAllocateCommandBuffers"}, {&f.freeCommandBuffers, "vkFreeCommandBuffers"},
		{&f.beginCommandBuffer, "vkBeginCommandBuffer"}, {&f.endCommandBuffer, "vkEndCommandBuffer"},
		{&f.resetCommandBuffer, "vkResetCommandBuffer"},
		{&f.cmdBindPipeline, "vkCmdBindPipeline"}, {&f.cmdPushConstants, "vkCmdPushConstants"},
		{&f.cmdDispatch, "vkCmdDispatch"}, {&f.cmdPipelineBarrier, "vkCmdPipelineBarrier"},
		{&f.cmdCopyBuffer, "vkCmdCopyBuffer"}, {&f.cmdFillBuffer, "vkCmdFillBuffer"},
		{&f.cmdWriteTimestamp, "vkCmdWriteTimestamp"}, {&f.cmdResetQueryPool, "vkCmdResetQueryPool"},
		{&f.createFence, "vkCreateFence"}, {&f.destroyFence, "vkDestroyFence"},
		{&f.waitForFences, "vkWaitForFences"}, {&f.resetFences, "vkResetFences"}, {&f.getFenceStatus, "vkGetFenceStatus"},
		{&f.createQueryPool, "vkCreateQueryPool"}, {&f.destroyQueryPool, "vkDestroyQueryPool"},
		{&f.getQueryPoolResults, "vkGetQueryPoolResults"},
	} {
		var pin Pinner
		*s.p = call(in.fn.getDeviceProcAddr, h, pin.CString(s.name))
		pin.Unpin()
		if *s.p == 0 {
			if f.destroyDevice != 0 {
				call(f.destroyDevice, h, 0)
			}
			return nil, fmt.Errorf("vulkan: the device lacks %s (Vulkan 1.2 is needed)", s.name)
		}
	}
	return d, nil
}

// Destroy destroys the device.
func (d *Device) Destroy() {
	if d != nil && d.Handle != 0 {
		call(d.fn.destroyDevice, d.Handle, 0)
		d.Handle = 0
	}
}

// Queue returns queue index of family.
func (d *Device) Queue(family, index uint32) uintptr {
	var q uintptr
	call(d.fn.getDeviceQueue, d.Handle, uintptr(family), uintptr(index), uintptr(unsafe.Pointer(&q)))
	return q
}

// WaitIdle waits until the device has finished all its work.
func (d *Device) WaitIdle() error {
	return check("vkDeviceWaitIdle", call(d.fn.deviceWaitIdle, d.Handle))
}

// CreateBuffer creates a buffer.
func (d *Device) CreateBuffer(ci *BufferCreateInfo) (uint64, error) {
	var b uint64
	err := check("vkCreateBuffer", call(d.fn.createBuffer, d.Handle, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&b))))
	return b, err
}

// DestroyBuffer destroys a buffer.
func (d *Device) DestroyBuffer(b uint64) { call(d.fn.destroyBuffer, d.Handle, uintptr(b), 0) }

// BufferMemoryRequirements returns what memory b needs.
func (d *Device) BufferMemoryRequirements(b uint64) MemoryRequirements {
	var r MemoryRequirements
	call(d.fn.getBufferMemoryRequirements, d.Handle, uintptr(b), uintptr(unsafe.Pointer(&r)))
	return r
}

// AllocateMemory allocates device memory.
func (d *Device) AllocateMemory(ai *MemoryAllocateInfo) (uint64, error) {
	var m uint64
	err := check("vkAllocateMemory", call(d.fn.allocateMemory, d.Handle, uintptr(unsafe.Pointer(ai)), 0, uintptr(unsafe.Pointer(&m))))
	return m, err
}

// FreeMemory frees device memory.
func (d *Device) FreeMemory(m uint64) { call(d.fn.freeMemory, d.Handle, uintptr(m), 0) }

// BindBufferMemory binds b to m at offset.
func (d *Device) BindBufferMemory(b, m, offset uint64) error {
	return check("vkBindBufferMemory", call(d.fn.bindBufferMemory, d.Handle, uintptr(b), uintptr(m), uintptr(offset)))
}

// MapMemory maps size bytes of host-visible m from offset and returns
// the host address.
func (d *Device) MapMemory(m, offset, size uint64) (uintptr, error) {
	var p uintptr
	err := check("vkMapMemory", call(d.fn.mapMemory, d.Handle, uintptr(m), uintptr(offset), uintptr(size), 0, uintptr(unsafe.Pointer(&p))))
	return p, err
}

// UnmapMemory unmaps m.
func (d *Device) UnmapMemory(m uint64) { call(d.fn.unmapMemory, d.Handle, uintptr(m)) }

// BufferAddress returns b's device address (bufferDeviceAddress).
func (d *Device) BufferAddress(b uint64) uint64 {
	info := &BufferDeviceAddressInfo{SType: StructureTypeBufferDeviceAddressInfo, Buffer: b}
	return uint64(call(d.fn.getBufferDeviceAddress, d.Handle, uintptr(unsafe.Pointer(info))))
}

// CreateShaderModule creates a shader module from SPIR-V words.
func (d *Device) CreateShaderModule(code []uint32) (uint64, error) {
	var pin Pinner
	defer pin.Unpin()
	ci := &ShaderModuleCreateInfo{SType: StructureTypeShaderModuleCreateInfo, CodeSize: uintptr(4 * len(code)), PCode: Slice(&pin, code)}
	var m uint64
	err := check("vkCreateShaderModule", call(d.fn.createShaderModule, d.Handle, Ptr(&pin, ci), 0, uintptr(unsafe.Pointer(&m))))
	return m, err
}

// DestroyShaderModule destroys a shader module.
func (d *Device) DestroyShaderModule(m uint64) {
	call(d.fn.destroyShaderModule, d.Handle, uintptr(m), 0)
}

// CreatePipelineLayout creates a pipeline layout without descriptor
// sets, with pushBytes bytes of push constants for the compute stage.
func (d *Device) CreatePipelineLayout(pushBytes uint32) (uint64, error) {
	var pin Pinner
	defer pin.Unpin()
	r := &PushConstantRange{StageFlags: ShaderStageCompute, Size: pushBytes}
	ci := &PipelineLayoutCreateInfo{SType: StructureTypePipelineLayoutCreateInfo, PushConstantRangeCount: 1, PPushConstantRanges: Ptr(&pin, r)}
	var l uint64
	err := check("vkCreatePipelineLayout", call(d.fn.createPipelineLayout, d.Handle, Ptr(&pin, ci), 0, uintptr(unsafe.Pointer(&l))))
	return l, err
}

// DestroyPipelineLayout destroys a pipeline layout.
func (d *Device) DestroyPipelineLayout(l uint64) {
	call(d.fn.destroyPipelineLayout, d.Handle, uintptr(l), 0)
}

// CreateComputePipeline creates one compute pipeline from ci in cache
// (0: none).
func (d *Device) CreateComputePipeline(cache uint64, ci *ComputePipelineCreateInfo) (uint64, error) {
	var p uint64
	err := check("vkCreateComputePipelines", call(d.fn.createComputePipelines, d.Handle, uintptr(cache), 1, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&p))))
	return p, err
}

// DestroyPipeline destroys a pipeline.
func (d *Device) DestroyPipeline(p uint64) { call(d.fn.destroyPipeline, d.Handle, uintptr(p), 0) }

// CreatePipelineCache creates a pipeline cache seeded with data (which
// the driver ignores when it is not its own).
func (d *Device) CreatePipelineCache(data []byte) (uint64, error) {
	var pin Pinner
	defer pin.Unpin()
	ci := &PipelineCacheCreateInfo{SType: StructureTypePipelineCacheCreateInfo, InitialDataSize: uintptr(len(data)), PInitialData: Slice(&pin, data)}
	var c uint64
	err := check("vkCreatePipelineCache", call(d.fn.createPipelineCache, d.Handle, Ptr(&pin, ci), 0, uintptr(unsafe.Pointer(&c))))
	return c, err
}

// PipelineCacheData returns the cache's contents, to seed a later one.
func (d *Device) PipelineCacheData(c uint64) ([]byte, error) {
	var n uintptr
	if err := check("vkGetPipelineCacheData", call(d.fn.getPipelineCacheData, d.Handle, uintptr(c), uintptr(unsafe.Pointer(&n)), 0)); err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if n == 0 {
		return b, nil
	}
	err := check("vkGetPipelineCacheData", call(d.fn.getPipelineCacheData, d.Handle, uintptr(c), uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&b[0]))))
	return b[:n], err
}

// DestroyPipelineCache destroys a pipeline cache.
func (d *Device) DestroyPipelineCache(c uint64) {
	call(d.fn.destroyPipelineCache, d.Handle, uintptr(c), 0)
}

// CreateCommandPool creates a command pool of queue family whose buffers
// can be reset one by one.
func (d *Device) CreateCommandPool(family uint32) (uint64, error) {
	ci := &CommandPoolCreateInfo{SType: StructureTypeCommandPoolCreateInfo, Flags: CommandPoolResetCommandBuffer, QueueFamilyIndex: family}
	var p uint64
	err := check("vkCreateCommandPool", call(d.fn.createCommandPool, d.Handle, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&p))))
	return p, err
}

// DestroyCommandPool destroys a command pool and its buffers.
func (d *Device) DestroyCommandPool(p uint64) { call(d.fn.destroyCommandPool, d.Handle, uintptr(p), 0) }

// AllocateCommandBuffer allocates a primary command buffer from pool.
func (d *Device) AllocateCommandBuffer(pool uint64) (uintptr, error) {
	ai := &CommandBufferAllocateInfo{SType: StructureTypeCommandBufferAllocateInfo, CommandPool: pool, Level: CommandBufferLevelPrimary, CommandBufferCount: 1}
	var cb uintptr
	err := check("vkAllocateCommandBuffers", call(d.fn.allocateCommandBuffers, d.Handle, uintptr(unsafe.Pointer(ai)), uintptr(unsafe.Pointer(&cb))))
	return cb, err
}

// FreeCommandBuffer returns cb to pool.
func (d *Device) FreeCommandBuffer(pool uint64, cb uintptr) {
	call(d.fn.freeCommandBuffers, d.Handle, uintptr(pool), 1, uintptr(unsafe.Pointer(&cb)))
}

// BeginCommandBuffer starts recording cb with the usage flags.
func (d *Device) BeginCommandBuffer(cb uintptr, flags uint32) error {
	bi := &CommandBufferBeginInfo{SType: StructureTypeCommandBufferBeginInfo, Flags: flags}
	return check("vkBeginCommandBuffer", call(d.fn.beginCommandBuffer, cb, uintptr(unsafe.Pointer(bi))))
}

// EndCommandBuffer ends recording cb.
func (d *Device) EndCommandBuffer(cb uintptr) error {
	return check("vkEndCommandBuffer", call(d.fn.endCommandBuffer, cb))
}

// ResetCommandBuffer resets cb to the initial state.
func (d *Device) ResetCommandBuffer(cb uintptr) error {
	return check("vkResetCommandBuffer", call(d.fn.resetCommandBuffer, cb, 0))
}

// CmdBindPipeline binds a compute pipeline.
func (d *Device) CmdBindPipeline(cb uintptr, p uint64) {
	call(d.fn.cmdBindPipeline, cb, PipelineBindPointCompute, uintptr(p))
}

// CmdPushConstants records push constants for the compute stage.
func (d *Device) CmdPushConstants(cb uintptr, layout uint64, data []byte) {
	if len(data) == 0 {
		return
	}
	call(d.fn.cmdPushConstants, cb, uintptr(layout), ShaderStageCompute, 0, uintptr(len(data)), uintptr(unsafe.Pointer(&data[0])))
}

// CmdDispatch records a dispatch of x*y*z workgroups.
func (d *Device) CmdDispatch(cb uintptr, x, y, z uint32) {
	call(d.fn.cmdDispatch, cb, uintptr(x), uintptr(y), uintptr(z))
}

// CmdMemoryBarrier records a global memory barrier from the stages and
// accesses src to dst.
func (d *Device) CmdMemoryBarrier(cb uintptr, srcStage, dstStage, srcAccess, dstAccess uint32) {
	b := &MemoryBarrier{SType: StructureTypeMemoryBarrier, SrcAccessMask: srcAccess, DstAccessMask: dstAccess}
	call(d.fn.cmdPipelineBarrier, cb, uintptr(srcStage), uintptr(dstStage), 0, 1, uintptr(unsafe.Pointer(b)), 0, 0, 0, 0)
}

// CmdCopyBuffer records a copy of size bytes from src at srcOff to dst
// at dstOff.
func (d *Device) CmdCopyBuffer(cb uintptr, src, dst uint64, srcOff, dstOff, size uint64) {
	r := &BufferCopy{SrcOffset: srcOff, DstOffset: dstOff, Size: size}
	call(d.fn.cmdCopyBuffer, cb, uintptr(src), uintptr(dst), 1, uintptr(unsafe.Pointer(r)))
}

// CmdFillBuffer records filling size bytes of b from off with the word v.
func (d *Device) CmdFillBuffer(cb uintptr, b uint64, off, size uint64, v uint32) {
	call(d.fn.cmdFillBuffer, cb, uintptr(b), uintptr(off), uintptr(size), uintptr(v))
}

// CmdWriteTimestamp records a timestamp into query q of pool after stage.
func (d *Device) CmdWriteTimestamp(cb uintptr, stage uint32, pool uint64, q uint32) {
	call(d.fn.cmdWriteTimestamp, cb, uintptr(stage), uintptr(pool), uintptr(q))
}

// CmdResetQueryPool records resetting n queries of pool from first.
func (d *Device) CmdResetQueryPool(cb uintptr, pool uint64, first, n uint32) {
	call(d.fn.cmdResetQueryPool, cb, uintptr(pool), uintptr(first), uintptr(n))
}

// Submit submits command buffers to queue, signalling fence (0: none).
func (d *Device) Submit(queue uintptr, cbs []uintptr, fence uint64) error {
	var pin Pinner
	defer pin.Unpin()
	si := &SubmitInfo{SType: StructureTypeSubmitInfo, CommandBufferCount: uint32(len(cbs)), PCommandBuffers: Slice(&pin, cbs)}
	return check("vkQueueSubmit", call(d.fn.queueSubmit, queue, 1, Ptr(&pin, si), uintptr(fence)))
}

// SubmitOne submits the command buffer *cb to queue, signalling fence,
// with si as the submit's description: si and cb must be heap memory the
// caller keeps (a step's submit allocates nothing).
func (d *Device) SubmitOne(queue uintptr, si *SubmitInfo, cb *uintptr, fence uint64) error {
	*si = SubmitInfo{SType: StructureTypeSubmitInfo, CommandBufferCount: 1, PCommandBuffers: uintptr(unsafe.Pointer(cb))}
	return check("vkQueueSubmit", call(d.fn.queueSubmit, queue, 1, uintptr(unsafe.Pointer(si)), uintptr(fence)))
}

// Wait waits up to timeout nanoseconds for the fence *f (a timeout is an
// error wrapping Timeout); f must be heap memory the caller keeps.
func (d *Device) Wait(f *uint64, timeout uint64) error {
	return check("vkWaitForFences", call(d.fn.waitForFences, d.Handle, 1, uintptr(unsafe.Pointer(f)), 1, uintptr(timeout)))
}

// Reset resets the fence *f to unsignalled; f must be heap memory the
// caller keeps, and no pending submission may signal it.
func (d *Device) Reset(f *uint64) error {
	return check("vkResetFences", call(d.fn.resetFences, d.Handle, 1, uintptr(unsafe.Pointer(f))))
}

// CreateFence creates a fence, signalled with FenceCreateSignaled.
func (d *Device) CreateFence(flags uint32) (uint64, error) {
	ci := &FenceCreateInfo{SType: StructureTypeFenceCreateInfo, Flags: flags}
	var f uint64
	err := check("vkCreateFence", call(d.fn.createFence, d.Handle, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&f))))
	return f, err
}

// DestroyFence destroys a fence.
func (d *Device) DestroyFence(f uint64) { call(d.fn.destroyFence, d.Handle, uintptr(f), 0) }

// CreateTimestampPool creates a query pool of n timestamps.
func (d *Device) CreateTimestampPool(n uint32) (uint64, error) {
	ci := &QueryPoolCreateInfo{SType: StructureTypeQueryPoolCreateInfo, QueryType: QueryTypeTimestamp, QueryCount: n}
	var p uint64
	err := check("vkCreateQueryPool", call(d.fn.createQueryPool, d.Handle, uintptr(unsafe.Pointer(ci)), 0, uintptr(unsafe.Pointer(&p))))
	return p, err
}

// DestroyQueryPool destroys a query pool.
func (d *Device) DestroyQueryPool(p uint64) { call(d.fn.destroyQueryPool, d.Handle, uintptr(p), 0) }

// Timestamps reads len(dst) 64-bit timestamps of pool from first,
// waiting for them.
func (d *Device) Timestamps(pool uint64, first uint32, dst []uint64) error {
	if len(dst) == 0 {
		return nil
	}
	return check("vkGetQueryPoolResults", call(d.fn.getQueryPoolResults, d.Handle, uintptr(pool), uintptr(first), uintptr(len(dst)),
		uintptr(8*len(dst)), uintptr(unsafe.Pointer(&dst[0])), 8, QueryResult64|QueryResultWait))
}
