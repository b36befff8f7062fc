// Package vulkan runs models on any GPU with a Vulkan 1.2 driver (NVIDIA,
// AMD, Intel, Apple's through MoltenVK, and Mesa's lavapipe on the CPU),
// without cgo: the loader is opened at run time (package vk).
//
// Every buffer is reached from the shaders through its device address,
// passed in the push constants with the shapes: no descriptor sets. The
// shaders are GLSL compiled to SPIR-V by shaders/build.sh and embedded.
package vulkan

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"inferno/backend/vulkan/vk"
)

// apiVersion is the Vulkan version the backend asks for: 1.2 has buffer
// device addresses, 8- and 16-bit storage and float16 arithmetic in core.
var apiVersion = vk.MakeVersion(1, 2, 0)

// DeviceInfo describes a physical device as the driver reports it.
type DeviceInfo struct {
	Index        int
	Name         string
	Type         string // "discrete", "integrated", "virtual", "cpu" or "other"
	API          string // the driver's Vulkan version, e.g. "1.3.230"
	Driver       string // the driver's name and version info, e.g. "NVIDIA 580.82.07"
	VendorID     uint32
	MemoryBytes  uint64 // the largest device-local heap
	SubgroupSize uint32
	SharedMemory uint32 // bytes of shared memory a workgroup may use
	Float16      bool   // shaderFloat16
	Int8         bool   // shaderInt8 and 8-bit storage
	IntegerDot   bool   // VK_KHR_shader_integer_dot_product and its shaderIntegerDotProduct
	// CoopMatrix: VK_KHR_cooperative_matrix with its feature, the
	// vulkanMemoryModel feature its shaders declare, and a float16 x
	// float16 + float32 subgroup shape (CoopShape) the prompt products
	// (mul_mm_cm) can take; Open enables them where true.
	CoopMatrix bool
	CoopShape  [3]uint32 // M, N, K of mul_mm_cm's products
	// Unusable says why the backend cannot compute on the device (a
	// missing feature); "" when it can.
	Unusable string

	// IntegerDotFast: the driver says 4x8-bit packed signed dot products
	// are accelerated (integerDotProduct4x8BitPackedSignedAccelerated):
	// the decode products then take 8-bit activations (mul_mvq).
	IntegerDotFast bool

	handle   uintptr
	compute  uint32  // the queue family used for compute
	tsPeriod float32 // nanoseconds a timestamp tick
	tsValid  bool    // the compute queue writes timestamps
}

// String is the device's one-line description for `inferno devices`.
func (d *DeviceInfo) String() string {
	var feats []string
	for _, f := range []struct {
		on   bool
		name string
	}{{d.Float16, "fp16"}, {d.Int8, "int8"}, {d.IntegerDot, "int-dot"}, {d.IntegerDotFast, "(accelerated)"}, {d.CoopMatrix, "coop-matrix"}} {
		if f.on {
			feats = append(feats, f.name)
		}
	}
	s := fmt.Sprintf("vulkan %d: %s (%s, Vulkan %s, %s), %.1f GiB, subgroup %d, shared %d KiB, %s",
		d.Index, d.Name, d.Type, d.API, d.Driver, float64(d.MemoryBytes)/(1<<30), d.SubgroupSize, d.SharedMemory>>10, strings.Join(feats, " "))
	if d.Unusable != "" {
		s += " (unusable: " + d.Unusable + ")"
	}
	return s
}

var (
	instOnce sync.Once
	inst     *vk.Instance
	instErr  error
	infos    []DeviceInfo
)

// instance creates the process's Vulkan instance and lists its devices,
// once.
func instance() (*vk.Instance, []DeviceInfo, error) {
	instOnce.Do(func() {
		if err := vk.Load(); err != nil {
			instErr = err
			return
		}
		if v := vk.InstanceVersion(); v < apiVersion {
			instErr = fmt.Errorf("vulkan: the loader offers Vulkan %s; 1.2 is needed", vk.VersionString(v))
			return
		}
		var exts []string
		var flags uint32
		have, _ := vk.InstanceExtensions()
		for _, e := range have {
			if e == "VK_KHR_portability_enumeration" { // MoltenVK's devices are listed only with it
				exts = append(exts, e)
				flags |= vk.InstanceCreateEnumeratePortability
			}
		}
		inst, instErr = vk.CreateInstance("inferno", apiVersion, exts, flags)
		if instErr != nil {
			return
		}
		pds, err := inst.PhysicalDevices()
		if err != nil {
			instErr = err
			return
		}
		for i, pd := range pds {
			infos = append(infos, describe(inst, i, pd))
		}
	})
	return inst, infos, instErr
}

// describe reads what the backend needs to know of physical device pd.
func describe(in *vk.Instance, index int, pd uintptr) DeviceInfo {
	var pin vk.Pinner
	defer pin.Unpin()
	sub := &vk.PhysicalDeviceSubgroupProperties{SType: vk.StructureTypePhysicalDeviceSubgroupProperties}
	drv := &vk.PhysicalDeviceDriverProperties{SType: vk.StructureTypePhysicalDeviceDriverProperties, PNext: vk.Ptr(&pin, sub)}
	props := &vk.PhysicalDeviceProperties2{SType: vk.StructureTypePhysicalDeviceProperties2, PNext: vk.Ptr(&pin, drv)}
	exts, _ := in.DeviceExtensions(pd)
	hasExt := func(name string) bool {
		for _, e := range exts {
			if e == name {
				return true
			}
		}
		return false
	}
	// The integer dot product's structures are chained only where the
	// extension is listed (the backend asks for Vulkan 1.2, in which it
	// is an extension).
	dotExt := hasExt("VK_KHR_shader_integer_dot_product")
	coopExt := hasExt(coopExtension)
	dotProps := &vk.PhysicalDeviceShaderIntegerDotProductProperties{SType: vk.StructureTypePhysicalDeviceIntegerDotProductProps}
	if dotExt {
		sub.PNext = vk.Ptr(&pin, dotProps)
	}
	in.Properties2(pd, props)
	f11 := &vk.PhysicalDeviceVulkan11Features{SType: vk.StructureTypePhysicalDeviceVulkan11Features}
	f12 := &vk.PhysicalDeviceVulkan12Features{SType: vk.StructureTypePhysicalDeviceVulkan12Features, PNext: vk.Ptr(&pin, f11)}
	dotFeats := &vk.PhysicalDeviceShaderIntegerDotProductFeatures{SType: vk.StructureTypePhysicalDeviceIntegerDotProductFeatures}
	if dotExt {
		f11.PNext = vk.Ptr(&pin, dotFeats)
	}
	coopFeats := &vk.PhysicalDeviceCooperativeMatrixFeaturesKHR{SType: vk.StructureTypePhysicalDeviceCooperativeMatrixFeatures}
	if coopExt {
		coopFeats.PNext = f11.PNext
		f11.PNext = vk.Ptr(&pin, coopFeats)
	}
	feats := &vk.PhysicalDeviceFeatures2{SType: vk.StructureTypePhysicalDeviceFeatures2, PNext: vk.Ptr(&pin, f12)}
	in.Features2(pd, feats)
	mem := &vk.PhysicalDeviceMemoryProperties2{SType: vk.StructureTypePhysicalDeviceMemoryProperties2}
	in.MemoryProperties2(pd, mem)
	p := &props.Properties
	d := DeviceInfo{
		Index:        index,
		Name:         vk.GoString(p.DeviceName[:]),
		API:          vk.VersionString(p.ApiVersion),
		Driver:       strings.TrimSpace(vk.GoString(drv.DriverName[:]) + " " + vk.GoString(drv.DriverInfo[:])),
		VendorID:     p.VendorID,
		SubgroupSize: sub.SubgroupSize,
		SharedMemory: p.Limits.MaxComputeSharedMemorySize,
		Float16:      f12.ShaderFloat16 != 0,
		Int8:         f12.ShaderInt8 != 0 && f12.StorageBuffer8BitAccess != 0,
		handle:       pd,
	}
	d.Type = map[uint32]string{vk.PhysicalDeviceTypeIntegratedGPU: "integrated", vk.PhysicalDeviceTypeDiscreteGPU: "discrete",
		vk.PhysicalDeviceTypeVirtualGPU: "virtual", vk.PhysicalDeviceTypeCPU: "cpu"}[p.DeviceType]
	if d.Type == "" {
		d.Type = "other"
	}
	mp := &mem.MemoryProperties
	for i := range mp.MemoryHeapCount {
		if h := mp.MemoryHeaps[i]; h.Flags&vk.MemoryHeapDeviceLocal != 0 && h.Size > d.MemoryBytes {
			d.MemoryBytes = h.Size
		}
	}
	d.IntegerDot = dotExt && dotFeats.ShaderIntegerDotProduct != 0
	if coopExt && coopFeats.CooperativeMatrix != 0 && f12.VulkanMemoryModel != 0 {
		shapes, _ := in.CooperativeMatrixProperties(pd)
		d.CoopShape, d.CoopMatrix = coopShape(shapes)
	}
	d.IntegerDotFast = d.IntegerDot && dotProps.IntegerDotProduct4x8BitPackedSignedAccelerated != 0
	d.compute = ^uint32(0)
	for i, q := range in.QueueFamilies(pd) {
		if q.QueueFlags&vk.QueueCompute != 0 {
			d.compute = uint32(i)
			d.tsValid = q.TimestampValidBits > 0 && p.Limits.TimestampPeriod > 0
			break
		}
	}
	d.tsPeriod = p.Limits.TimestampPeriod
	var missing []string
	for _, f := range []struct {
		ok   bool
		name string
	}{
		{p.ApiVersion >= apiVersion, "Vulkan 1.2"},
		{d.compute != ^uint32(0), "a compute queue"},
		{f12.BufferDeviceAddress != 0, "bufferDeviceAddress"},
		{f11.StorageBuffer16BitAccess != 0, "storageBuffer16BitAccess"},
		{d.Float16, "shaderFloat16"},
		{d.Int8, "shaderInt8 and storageBuffer8BitAccess"},
		{feats.Features.ShaderInt64 != 0, "shaderInt64"},
		{d.SubgroupSize >= 4 && sub.SupportedOperations&subgroupArithmetic != 0, "subgroup arithmetic"},
	} {
		if !f.ok {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		d.Unusable = "lacks " + strings.Join(missing, ", ")
	}
	return d
}

// coopExtension is the extension mul_mm_cm_<type> needs.
const coopExtension = "VK_KHR_cooperative_matrix"

// coopShape picks from shapes (what
// vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR lists) the M, N, K of
// the products mul_mm_cm_<type> computes with: float16 A and B, float32 C
// and result, subgroup scope, no saturation, M and N 8 or 16 (dividing a
// subgroup's 32 x 32 part of the tile), K 8 or 16 (dividing a slab's
// 16-value units); the largest (M*N*K, then M) of those listed. False if
// none is.
func coopShape(shapes []vk.CooperativeMatrixPropertiesKHR) ([3]uint32, bool) {
	var best [3]uint32
	fits := func(v uint32) bool { return v == 8 || v == 16 }
	for _, s := range shapes {
		if s.AType != vk.ComponentTypeFloat16 || s.BType != vk.ComponentTypeFloat16 || s.CType != vk.ComponentTypeFloat32 ||
			s.ResultType != vk.ComponentTypeFloat32 || s.Scope != vk.ScopeSubgroup || s.SaturatingAccumulation != 0 ||
			!fits(s.MSize) || !fits(s.NSize) || !fits(s.KSize) {
			continue
		}
		c := [3]uint32{s.MSize, s.NSize, s.KSize}
		if v, b := c[0]*c[1]*c[2], best[0]*best[1]*best[2]; v > b || v == b && c[0] > best[0] {
			best = c
		}
	}
	return best, best[0] != 0
}

// subgroupArithmetic is VK_SUBGROUP_FEATURE_ARITHMETIC_BIT.
const subgroupArithmetic = 0x4

// Devices lists the Vulkan devices with what the backend needs to know of
// each, usable or not.
func Devices() ([]DeviceInfo, error) {
	_, ds, err := instance()
	return ds, err
}

// Available returns nil when a Vulkan loader and a usable device are
// there, or a one-line error saying what is missing.
func Available() error {
	ds, err := Devices()
	if err != nil {
		return err
	}
	if len(ds) == 0 {
		return errors.New("vulkan: the loader lists no device (no Vulkan driver installed?)")
	}
	var why []string
	for _, d := range ds {
		if d.Unusable == "" {
			return nil
		}
		why = append(why, d.Name+" "+d.Unusable)
	}
	return fmt.Errorf("vulkan: no usable device (%s)", strings.Join(why, "; "))
}
