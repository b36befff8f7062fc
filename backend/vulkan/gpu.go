package vulkan

import (
	"errors"
	"fmt"
	"unsafe"

	"inferno/backend/vulkan/vk"
)

// pushBytes is the size of every pipeline's push-constant block: the
// 128 bytes every Vulkan device offers (16 addresses or scalars).
const pushBytes = 128

// A Device is a logical device open on one physical device, with one
// compute queue: its buffers, pipelines and command recorders. A Device
// must be used by one goroutine at a time.
type Device struct {
	DeviceInfo
	dev       *vk.Device
	queue     uintptr
	pool      uint64 // command pool
	fence     uint64
	layout    uint64 // the pipeline layout: push constants only
	cache     uint64 // the pipeline cache
	pipelines map[pipelineKey]*Pipeline
	staging   *Buffer // host-visible, for Write and Read
	memTypes  vk.PhysicalDeviceMemoryProperties
	closed    bool
	// wait bounds a submission's wait (waitTimeout; the tests shorten
	// it). lost, once a wait has timed out, is the error every later
	// submission returns: the GPU may still be running the work, so
	// nothing it may touch is freed or reused (Free, Release and Close
	// leave those to the process's end).
	wait uint64
	lost error
	// A submit's description, its command buffer and the fence, where
	// the driver reads them: in the Device, so a step allocates nothing.
	si      vk.SubmitInfo
	cb      uintptr
	fenceAt uint64
}

// Pick returns the index of the device to use by default: the first
// usable discrete GPU, else integrated, virtual, then any usable one.
func Pick() (int, error) {
	if err := Available(); err != nil {
		return 0, err
	}
	ds, _ := Devices()
	for _, t := range []string{"discrete", "integrated", "virtual", "cpu", "other"} {
		for _, d := range ds {
			if d.Unusable == "" && d.Type == t {
				return d.Index, nil
			}
		}
	}
	return 0, errors.New("vulkan: no usable device")
}

// Open opens device index of Devices (Pick's choice when index < 0).
func Open(index int) (*Device, error) {
	in, ds, err := instance()
	if err != nil {
		return nil, err
	}
	if index < 0 {
		if index, err = Pick(); err != nil {
			return nil, err
		}
	}
	if index >= len(ds) {
		return nil, fmt.Errorf("vulkan: no device %d (%d devices; `inferno devices` lists them)", index, len(ds))
	}
	info := ds[index]
	if info.Unusable != "" {
		return nil, fmt.Errorf("vulkan: device %d (%s) %s", index, info.Name, info.Unusable)
	}
	exts, _ := in.DeviceExtensions(info.handle)
	var enable []string
	for _, e := range exts {
		if e == "VK_KHR_portability_subset" { // must be enabled where offered (MoltenVK)
			enable = append(enable, e)
		}
	}
	var pin vk.Pinner
	defer pin.Unpin()
	f11 := &vk.PhysicalDeviceVulkan11Features{SType: vk.StructureTypePhysicalDeviceVulkan11Features, StorageBuffer16BitAccess: 1}
	if info.IntegerDot { // mul_mvq's dotPacked4x8EXT
		enable = append(enable, "VK_KHR_shader_integer_dot_product")
		f11.PNext = vk.Ptr(&pin, &vk.PhysicalDeviceShaderIntegerDotProductFeatures{
			SType: vk.StructureTypePhysicalDeviceIntegerDotProductFeatures, ShaderIntegerDotProduct: 1})
	}
	if info.CoopMatrix { // mul_mm_cm's coopmat products
		enable = append(enable, coopExtension)
		f11.PNext = vk.Ptr(&pin, &vk.PhysicalDeviceCooperativeMatrixFeaturesKHR{
			SType: vk.StructureTypePhysicalDeviceCooperativeMatrixFeatures, PNext: f11.PNext, CooperativeMatrix: 1})
	}
	f12 := &vk.PhysicalDeviceVulkan12Features{SType: vk.StructureTypePhysicalDeviceVulkan12Features, PNext: vk.Ptr(&pin, f11),
		BufferDeviceAddress: 1, ShaderFloat16: 1, ShaderInt8: 1, StorageBuffer8BitAccess: 1}
	if info.CoopMatrix {
		f12.VulkanMemoryModel = 1
	}
	feats := &vk.PhysicalDeviceFeatures2{SType: vk.StructureTypePhysicalDeviceFeatures2, PNext: vk.Ptr(&pin, f12)}
	feats.Features.ShaderInt64 = 1
	prio := float32(1)
	qci := &vk.DeviceQueueCreateInfo{SType: vk.StructureTypeDeviceQueueCreateInfo, QueueFamilyIndex: info.compute, QueueCount: 1, PQueuePriorities: vk.Ptr(&pin, &prio)}
	dci := &vk.DeviceCreateInfo{SType: vk.StructureTypeDeviceCreateInfo, PNext: vk.Ptr(&pin, feats),
		QueueCreateInfoCount: 1, PQueueCreateInfos: vk.Ptr(&pin, qci),
		EnabledExtensionCount: uint32(len(enable)), PpEnabledExtensionNames: pin.CStrings(enable)}
	dev, err := in.CreateDevice(info.handle, dci)
	if err != nil {
		return nil, fmt.Errorf("vulkan: device %d (%s): %w", index, info.Name, err)
	}
	d := &Device{DeviceInfo: info, dev: dev, queue: dev.Queue(info.compute, 0), pipelines: map[pipelineKey]*Pipeline{}, wait: waitTimeout}
	mem := &vk.PhysicalDeviceMemoryProperties2{SType: vk.StructureTypePhysicalDeviceMemoryProperties2}
	in.MemoryProperties2(info.handle, mem)
	d.memTypes = mem.MemoryProperties
	if err := d.init(); err != nil {
		d.Close()
		return nil, fmt.Errorf("vulkan: device %d (%s): %w", index, info.Name, err)
	}
	return d, nil
}

func (d *Device) init() error {
	var err error
	if d.pool, err = d.dev.CreateCommandPool(d.compute); err != nil {
		return err
	}
	if d.fence, err = d.dev.CreateFence(0); err != nil {
		return err
	}
	if d.layout, err = d.dev.CreatePipelineLayout(pushBytes); err != nil {
		return err
	}
	if d.cache, err = d.dev.CreatePipelineCache(nil); err != nil {
		return err
	}
	d.staging, err = d.newBuffer(stagingBytes, true)
	return err
}

// Close releases the device and everything made on it. Buffers must not
// be used after.
func (d *Device) Close() error {
	if d == nil || d.closed {
		return nil
	}
	d.closed = true
	if d.dev == nil || d.lost != nil {
		return nil
	}
	d.dev.WaitIdle()
	for _, p := range d.pipelines {
		d.dev.DestroyPipeline(p.handle)
	}
	d.staging.Free()
	for _, h := range []struct {
		h       uint64
		destroy func(uint64)
	}{{d.cache, d.dev.DestroyPipelineCache}, {d.layout, d.dev.DestroyPipelineLayout}, {d.fence, d.dev.DestroyFence}, {d.pool, d.dev.DestroyCommandPool}} {
		if h.h != 0 {
			h.destroy(h.h)
		}
	}
	d.dev.Destroy()
	return nil
}

// waitTimeout bounds a wait for the GPU: a step that has not finished in
// a minute is a lost device, not a slow one.
const waitTimeout = uint64(60e9)

// PushBytes returns the bytes of a push-constant struct (addresses as
// uint64, scalars as 32-bit fields, in the shader's block order).
func PushBytes[T any](v *T) []byte {
	n := unsafe.Sizeof(*v)
	if n > pushBytes {
		panic(fmt.Sprintf("vulkan: push constants of %d bytes exceed %d", n, pushBytes))
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(v)), n)
}

// F32Bytes views float32s as bytes.
func F32Bytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), 4*len(f))
}

// I32Bytes views int32s as bytes.
func I32Bytes(v []int32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

// U16Bytes views uint16s as bytes.
func U16Bytes(v []uint16) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 2*len(v))
}
