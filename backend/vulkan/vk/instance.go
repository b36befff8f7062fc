package vk

import (
	"fmt"
	"unsafe"
)

// Structure types (VkStructureType) of the structures this binding uses.
const (
	StructureTypeApplicationInfo                         = 0
	StructureTypeInstanceCreateInfo                      = 1
	StructureTypeDeviceQueueCreateInfo                   = 2
	StructureTypeDeviceCreateInfo                        = 3
	StructureTypeSubmitInfo                              = 4
	StructureTypeMemoryAllocateInfo                      = 5
	StructureTypeMappedMemoryRange                       = 6
	StructureTypeFenceCreateInfo                         = 8
	StructureTypeQueryPoolCreateInfo                     = 11
	StructureTypeBufferCreateInfo                        = 12
	StructureTypeShaderModuleCreateInfo                  = 16
	StructureTypePipelineCacheCreateInfo                 = 17
	StructureTypePipelineShaderStageCreateInfo           = 18
	StructureTypeComputePipelineCreateInfo               = 29
	StructureTypePipelineLayoutCreateInfo                = 30
	StructureTypeCommandPoolCreateInfo                   = 39
	StructureTypeCommandBufferAllocateInfo               = 40
	StructureTypeCommandBufferBeginInfo                  = 42
	StructureTypeMemoryBarrier                           = 46
	StructureTypePhysicalDeviceVulkan11Features          = 49
	StructureTypePhysicalDeviceVulkan12Features          = 51
	StructureTypePhysicalDeviceVulkan13Features          = 53
	StructureTypePhysicalDeviceFeatures2                 = 1000059000
	StructureTypePhysicalDeviceProperties2               = 1000059001
	StructureTypePhysicalDeviceMemoryProperties2         = 1000059006
	StructureTypeMemoryAllocateFlagsInfo                 = 1000060000
	StructureTypePhysicalDeviceSubgroupProperties        = 1000094000
	StructureTypePhysicalDeviceDriverProperties          = 1000196000
	StructureTypePhysicalDeviceSubgroupSizeControlProps  = 1000225000
	StructureTypeRequiredSubgroupSizeCreateInfo          = 1000225001
	StructureTypePhysicalDeviceMemoryBudgetProperties    = 1000237000
	StructureTypeBufferDeviceAddressInfo                 = 1000244001
	StructureTypePhysicalDeviceIntegerDotProductFeatures = 1000280000
	StructureTypePhysicalDeviceIntegerDotProductProps    = 1000280001
	StructureTypePhysicalDeviceCooperativeMatrixFeatures = 1000506000
	StructureTypeCooperativeMatrixProperties             = 1000506001
)

// Component types (VkComponentTypeKHR) and scopes (VkScopeKHR) of
// VK_KHR_cooperative_matrix's shapes.
const (
	ComponentTypeFloat16 = 0
	ComponentTypeFloat32 = 1
	ScopeSubgroup        = 3
)

// Physical device types (VkPhysicalDeviceType).
const (
	PhysicalDeviceTypeOther         = 0
	PhysicalDeviceTypeIntegratedGPU = 1
	PhysicalDeviceTypeDiscreteGPU   = 2
	PhysicalDeviceTypeVirtualGPU    = 3
	PhysicalDeviceTypeCPU           = 4
)

// Flags this binding uses.
const (
	InstanceCreateEnumeratePortability      = 0x1 // VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR
	QueueCompute                            = 0x2 // VK_QUEUE_COMPUTE_BIT
	QueueGraphics                           = 0x1 // VK_QUEUE_GRAPHICS_BIT
	MemoryPropertyDeviceLocal               = 0x1
	MemoryPropertyHostVisible               = 0x2
	MemoryPropertyHostCoherent              = 0x4
	MemoryPropertyHostCached                = 0x8
	MemoryHeapDeviceLocal                   = 0x1
	BufferUsageTransferSrc                  = 0x1
	BufferUsageTransferDst                  = 0x2
	BufferUsageStorageBuffer                = 0x20
	BufferUsageShaderDeviceAddress          = 0x20000
	MemoryAllocateDeviceAddress             = 0x2 // VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT
	ShaderStageCompute                      = 0x20
	PipelineBindPointCompute                = 1
	CommandPoolResetCommandBuffer           = 0x2
	CommandBufferLevelPrimary               = 0
	CommandBufferUsageOneTimeSubmit         = 0x1
	CommandBufferUsageSimultaneousUse       = 0x4
	PipelineStageTopOfPipe                  = 0x1
	PipelineStageComputeShader              = 0x800
	PipelineStageTransfer                   = 0x1000
	PipelineStageBottomOfPipe               = 0x2000
	PipelineStageHost                       = 0x4000
	AccessShaderRead                        = 0x20
	AccessShaderWrite                       = 0x40
	AccessTransferRead                      = 0x800
	AccessTransferWrite                     = 0x1000
	AccessHostRead                          = 0x2000
	AccessHostWrite                         = 0x4000
	QueryTypeTimestamp                      = 2
	QueryResult64                           = 0x1
	QueryResultWait                         = 0x2
	FenceCreateSignaled                     = 0x1
	PipelineShaderStageRequireFullSubgroups = 0x2
)

// An Instance is a VkInstance with its instance-level entry points.
type Instance struct {
	Handle uintptr
	fn     struct {
		destroyInstance, enumeratePhysicalDevices, getPhysicalDeviceProperties2,
		getPhysicalDeviceFeatures2, getPhysicalDeviceMemoryProperties2,
		getPhysicalDeviceQueueFamilyProperties, enumerateDeviceExtensionProperties,
		createDevice, getDeviceProcAddr uintptr
		// optional: 0 where the loader does not know
		// VK_KHR_cooperative_matrix
		getPhysicalDeviceCooperativeMatrixProperties uintptr
	}
}

// CreateInstance creates an instance for apiVersion with the extensions
// exts and the creation flags.
func CreateInstance(app string, apiVersion uint32, exts []string, flags uint32) (*Instance, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	var pin Pinner
	defer pin.Unpin()
	ai := &ApplicationInfo{SType: StructureTypeApplicationInfo, PApplicationName: pin.CString(app), PEngineName: pin.CString(app), ApiVersion: apiVersion}
	ci := &InstanceCreateInfo{SType: StructureTypeInstanceCreateInfo, Flags: flags, PApplicationInfo: Ptr(&pin, ai),
		EnabledExtensionCount: uint32(len(exts)), PpEnabledExtensionNames: pin.CStrings(exts)}
	var h uintptr
	if err := check("vkCreateInstance", call(global.createInstance, Ptr(&pin, ci), 0, uintptr(unsafe.Pointer(&h)))); err != nil {
		return nil, err
	}
	in := &Instance{Handle: h}
	for _, f := range []struct {
		p    *uintptr
		name string
	}{
		{&in.fn.destroyInstance, "vkDestroyInstance"},
		{&in.fn.enumeratePhysicalDevices, "vkEnumeratePhysicalDevices"},
		{&in.fn.getPhysicalDeviceProperties2, "vkGetPhysicalDeviceProperties2"},
		{&in.fn.getPhysicalDeviceFeatures2, "vkGetPhysicalDeviceFeatures2"},
		{&in.fn.getPhysicalDeviceMemoryProperties2, "vkGetPhysicalDeviceMemoryProperties2"},
		{&in.fn.getPhysicalDeviceQueueFamilyProperties, "vkGetPhysicalDeviceQueueFamilyProperties"},
		{&in.fn.enumerateDeviceExtensionProperties, "vkEnumerateDeviceExtensionProperties"},
		{&in.fn.createDevice, "vkCreateDevice"},
		{&in.fn.getDeviceProcAddr, "vkGetDeviceProcAddr"},
	} {
		if *f.p = instanceProc(h, f.name); *f.p == 0 {
			if in.fn.destroyInstance != 0 {
				call(in.fn.destroyInstance, h, 0)
			}
			return nil, fmt.Errorf("vulkan: the instance lacks %s (Vulkan 1.1 is needed)", f.name)
		}
	}
	in.fn.getPhysicalDeviceCooperativeMatrixProperties = instanceProc(h, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR")
	return in, nil
}

// CooperativeMatrixPropertiesKHR is the C structure
// VkCooperativeMatrixPropertiesKHR: one product shape D = A B + C of
// VK_KHR_cooperative_matrix (A: MxK, B: KxN, C and D: MxN).
type CooperativeMatrixPropertiesKHR struct {
	SType                  uint32
	PNext                  uintptr
	MSize, NSize, KSize    uint32
	AType, BType, CType    uint32
	ResultType             uint32
	SaturatingAccumulation uint32
	Scope                  uint32
}

// CooperativeMatrixProperties lists the cooperative matrix shapes pd
// offers (vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR); none where
// the loader lacks the function.
func (in *Instance) CooperativeMatrixProperties(pd uintptr) ([]CooperativeMatrixPropertiesKHR, error) {
	f := in.fn.getPhysicalDeviceCooperativeMatrixProperties
	if f == 0 {
		return nil, nil
	}
	var n uint32
	if err := check("vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR", call(f, pd, uintptr(unsafe.Pointer(&n)), 0)); err != nil {
		return nil, err
	}
	props := make([]CooperativeMatrixPropertiesKHR, n)
	if n == 0 {
		return props, nil
	}
	for i := range props {
		props[i].SType = StructureTypeCooperativeMatrixProperties
	}
	if err := check("vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR", call(f, pd, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&props[0])))); err != nil {
		return nil, err
	}
	return props[:n], nil
}

// Destroy destroys the instance.
func (in *Instance) Destroy() {
	if in != nil && in.Handle != 0 {
		call(in.fn.destroyInstance, in.Handle, 0)
		in.Handle = 0
	}
}

// PhysicalDevices lists the instance's physical devices.
func (in *Instance) PhysicalDevices() ([]uintptr, error) {
	var n uint32
	if err := check("vkEnumeratePhysicalDevices", call(in.fn.enumeratePhysicalDevices, in.Handle, uintptr(unsafe.Pointer(&n)), 0)); err != nil {
		return nil, err
	}
	devs := make([]uintptr, n)
	if n == 0 {
		return devs, nil
	}
	if err := check("vkEnumeratePhysicalDevices", call(in.fn.enumeratePhysicalDevices, in.Handle, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&devs[0])))); err != nil {
		return nil, err
	}
	return devs[:n], nil
}

// Properties2 fills p (its SType set, its PNext chain built by the caller
// with a Pinner) for the physical device pd.
func (in *Instance) Properties2(pd uintptr, p *PhysicalDeviceProperties2) {
	call(in.fn.getPhysicalDeviceProperties2, pd, uintptr(unsafe.Pointer(p)))
}

// Features2 fills f (SType and PNext chain set by the caller).
func (in *Instance) Features2(pd uintptr, f *PhysicalDeviceFeatures2) {
	call(in.fn.getPhysicalDeviceFeatures2, pd, uintptr(unsafe.Pointer(f)))
}

// MemoryProperties2 fills m (SType and PNext chain set by the caller).
func (in *Instance) MemoryProperties2(pd uintptr, m *PhysicalDeviceMemoryProperties2) {
	call(in.fn.getPhysicalDeviceMemoryProperties2, pd, uintptr(unsafe.Pointer(m)))
}

// QueueFamilies lists pd's queue families.
func (in *Instance) QueueFamilies(pd uintptr) []QueueFamilyProperties {
	var n uint32
	call(in.fn.getPhysicalDeviceQueueFamilyProperties, pd, uintptr(unsafe.Pointer(&n)), 0)
	qs := make([]QueueFamilyProperties, n)
	if n > 0 {
		call(in.fn.getPhysicalDeviceQueueFamilyProperties, pd, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&qs[0])))
	}
	return qs[:n]
}

// DeviceExtensions lists the extensions pd offers.
func (in *Instance) DeviceExtensions(pd uintptr) ([]string, error) {
	var n uint32
	if err := check("vkEnumerateDeviceExtensionProperties", call(in.fn.enumerateDeviceExtensionProperties, pd, 0, uintptr(unsafe.Pointer(&n)), 0)); err != nil {
		return nil, err
	}
	props := make([]ExtensionProperties, n)
	if n > 0 {
		if err := check("vkEnumerateDeviceExtensionProperties", call(in.fn.enumerateDeviceExtensionProperties, pd, 0, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&props[0])))); err != nil {
			return nil, err
		}
	}
	names := make([]string, n)
	for i := range names {
		names[i] = GoString(props[i].ExtensionName[:])
	}
	return names, nil
}
