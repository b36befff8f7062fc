package vk

import (
	"reflect"
	"testing"
)

// cSizes are sizeof of each structure as a C compiler gives it for
// vulkan_core.h on a 64-bit target (gcc, x86-64; arm64 lays these out
// alike), written down once: the Go structs must match them.
var cSizes = map[string]uintptr{
	"PhysicalDeviceCooperativeMatrixFeaturesKHR":        24,
	"CooperativeMatrixPropertiesKHR":                    56,
	"ApplicationInfo":                                   48,
	"InstanceCreateInfo":                                64,
	"ExtensionProperties":                               260,
	"Extent3D":                                          12,
	"PhysicalDeviceLimits":                              504,
	"PhysicalDeviceSparseProperties":                    20,
	"PhysicalDeviceProperties":                          824,
	"PhysicalDeviceProperties2":                         840,
	"PhysicalDeviceSubgroupProperties":                  32,
	"ConformanceVersion":                                4,
	"PhysicalDeviceDriverProperties":                    536,
	"PhysicalDeviceSubgroupSizeControlProperties":       32,
	"MemoryType":                                        8,
	"MemoryHeap":                                        16,
	"PhysicalDeviceMemoryProperties":                    520,
	"PhysicalDeviceMemoryProperties2":                   536,
	"PhysicalDeviceMemoryBudgetPropertiesEXT":           272,
	"QueueFamilyProperties":                             24,
	"PhysicalDeviceFeatures":                            220,
	"PhysicalDeviceFeatures2":                           240,
	"PhysicalDeviceVulkan11Features":                    64,
	"PhysicalDeviceVulkan12Features":                    208,
	"PhysicalDeviceVulkan13Features":                    80,
	"PhysicalDeviceShaderIntegerDotProductFeatures":     24,
	"PhysicalDeviceShaderIntegerDotProductProperties":   136,
	"DeviceQueueCreateInfo":                             40,
	"DeviceCreateInfo":                                  72,
	"BufferCreateInfo":                                  56,
	"MemoryRequirements":                                24,
	"MemoryAllocateInfo":                                32,
	"MemoryAllocateFlagsInfo":                           24,
	"BufferDeviceAddressInfo":                           24,
	"MappedMemoryRange":                                 40,
	"ShaderModuleCreateInfo":                            40,
	"PushConstantRange":                                 12,
	"PipelineLayoutCreateInfo":                          48,
	"SpecializationMapEntry":                            16,
	"SpecializationInfo":                                32,
	"PipelineShaderStageCreateInfo":                     48,
	"PipelineShaderStageRequiredSubgroupSizeCreateInfo": 24,
	"ComputePipelineCreateInfo":                         96,
	"PipelineCacheCreateInfo":                           40,
	"CommandPoolCreateInfo":                             24,
	"CommandBufferAllocateInfo":                         32,
	"CommandBufferBeginInfo":                            32,
	"MemoryBarrier":                                     24,
	"BufferCopy":                                        24,
	"SubmitInfo":                                        72,
	"FenceCreateInfo":                                   24,
	"QueryPoolCreateInfo":                               32,
}

func TestLayout(t *testing.T) {
	for _, v := range []any{
		ApplicationInfo{},
		InstanceCreateInfo{},
		ExtensionProperties{},
		Extent3D{},
		PhysicalDeviceLimits{},
		PhysicalDeviceSparseProperties{},
		PhysicalDeviceProperties{},
		PhysicalDeviceProperties2{},
		PhysicalDeviceSubgroupProperties{},
		ConformanceVersion{},
		PhysicalDeviceDriverProperties{},
		PhysicalDeviceSubgroupSizeControlProperties{},
		MemoryType{},
		MemoryHeap{},
		PhysicalDeviceMemoryProperties{},
		PhysicalDeviceMemoryProperties2{},
		PhysicalDeviceMemoryBudgetPropertiesEXT{},
		QueueFamilyProperties{},
		PhysicalDeviceFeatures{},
		PhysicalDeviceFeatures2{},
		PhysicalDeviceVulkan11Features{},
		PhysicalDeviceVulkan12Features{},
		PhysicalDeviceVulkan13Features{},
		PhysicalDeviceShaderIntegerDotProductFeatures{},
		PhysicalDeviceShaderIntegerDotProductProperties{},
		DeviceQueueCreateInfo{},
		DeviceCreateInfo{},
		BufferCreateInfo{},
		MemoryRequirements{},
		MemoryAllocateInfo{},
		MemoryAllocateFlagsInfo{},
		BufferDeviceAddressInfo{},
		MappedMemoryRange{},
		ShaderModuleCreateInfo{},
		PushConstantRange{},
		PipelineLayoutCreateInfo{},
		SpecializationMapEntry{},
		SpecializationInfo{},
		PipelineShaderStageCreateInfo{},
		PipelineShaderStageRequiredSubgroupSizeCreateInfo{},
		ComputePipelineCreateInfo{},
		PipelineCacheCreateInfo{},
		CommandPoolCreateInfo{},
		CommandBufferAllocateInfo{},
		CommandBufferBeginInfo{},
		MemoryBarrier{},
		BufferCopy{},
		SubmitInfo{},
		FenceCreateInfo{},
		QueryPoolCreateInfo{},
		PhysicalDeviceCooperativeMatrixFeaturesKHR{},
		CooperativeMatrixPropertiesKHR{},
	} {
		ty := reflect.TypeOf(v)
		want, ok := cSizes[ty.Name()]
		if !ok {
			t.Errorf("%s: no C size written down", ty.Name())
			continue
		}
		if ty.Size() != want {
			t.Errorf("%s: Go size %d, C size %d", ty.Name(), ty.Size(), want)
		}
	}
}
