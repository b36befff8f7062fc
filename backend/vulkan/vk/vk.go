// Package vk is a minimal binding of Vulkan's compute subset, without cgo:
// the loader is opened at run time (libvulkan.so.1, vulkan-1.dll,
// libvulkan.1.dylib or libMoltenVK.dylib) and every entry point is
// reached through vkGetInstanceProcAddr and vkGetDeviceProcAddr. The
// structures are Go structs with the C layout (structs.go, generated from
// vulkan_core.h by gen.go); the functions are thin typed wrappers that
// return Vulkan's result codes as errors.
//
// Pointers inside structures passed to Vulkan must stay where they are
// for the call: callers build them with a Pinner (Pin), which keeps the
// objects on the heap and unmoved until Unpin.
package vk

//go:generate go run gen.go

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"inferno/internal/dl"
)

// Result is a VkResult that is not VK_SUCCESS.
type Result int32

// The results the backend names; others print as their number.
const (
	Success                  Result = 0
	NotReady                 Result = 1
	Timeout                  Result = 2
	Incomplete               Result = 5
	ErrorOutOfHostMemory     Result = -1
	ErrorOutOfDeviceMemory   Result = -2
	ErrorInitializationFail  Result = -3
	ErrorDeviceLost          Result = -4
	ErrorLayerNotPresent     Result = -6
	ErrorExtensionNotPresent Result = -7
	ErrorFeatureNotPresent   Result = -8
	ErrorIncompatibleDriver  Result = -9
	ErrorTooManyObjects      Result = -10
)

var resultNames = map[Result]string{
	NotReady: "VK_NOT_READY", Timeout: "VK_TIMEOUT", Incomplete: "VK_INCOMPLETE",
	ErrorOutOfHostMemory: "VK_ERROR_OUT_OF_HOST_MEMORY", ErrorOutOfDeviceMemory: "VK_ERROR_OUT_OF_DEVICE_MEMORY",
	ErrorInitializationFail: "VK_ERROR_INITIALIZATION_FAILED", ErrorDeviceLost: "VK_ERROR_DEVICE_LOST",
	ErrorLayerNotPresent: "VK_ERROR_LAYER_NOT_PRESENT", ErrorExtensionNotPresent: "VK_ERROR_EXTENSION_NOT_PRESENT",
	ErrorFeatureNotPresent: "VK_ERROR_FEATURE_NOT_PRESENT", ErrorIncompatibleDriver: "VK_ERROR_INCOMPATIBLE_DRIVER",
	ErrorTooManyObjects: "VK_ERROR_TOO_MANY_OBJECTS",
}

func (r Result) Error() string {
	if s, ok := resultNames[r]; ok {
		return s
	}
	return fmt.Sprintf("VkResult %d", int32(r))
}

// check returns nil for VK_SUCCESS and an error naming op otherwise.
func check(op string, r uintptr) error {
	if int32(r) == 0 {
		return nil
	}
	return fmt.Errorf("vulkan: %s: %w", op, Result(int32(r)))
}

// MakeVersion packs a Vulkan API version.
func MakeVersion(major, minor, patch uint32) uint32 { return major<<22 | minor<<12 | patch }

// VersionString prints a packed API version as major.minor.patch.
func VersionString(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", v>>22&0x7f, v>>12&0x3ff, v&0xfff)
}

// A Pinner keeps the Go objects whose addresses a structure passed to
// Vulkan holds on the heap and unmoved until Unpin.
type Pinner struct{ p runtime.Pinner }

// Ptr pins v and returns its address.
func Ptr[T any](p *Pinner, v *T) uintptr {
	if v == nil {
		return 0
	}
	p.p.Pin(v)
	return uintptr(unsafe.Pointer(v))
}

// Slice pins s's backing array and returns its address (0 when empty).
func Slice[T any](p *Pinner, s []T) uintptr {
	if len(s) == 0 {
		return 0
	}
	p.p.Pin(&s[0])
	return uintptr(unsafe.Pointer(&s[0]))
}

// CString returns a pinned NUL-terminated copy of s.
func (p *Pinner) CString(s string) uintptr {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return Slice(p, b)
}

// CStrings returns a pinned array of pinned C strings.
func (p *Pinner) CStrings(ss []string) uintptr {
	if len(ss) == 0 {
		return 0
	}
	a := make([]uintptr, len(ss))
	for i, s := range ss {
		a[i] = p.CString(s)
	}
	return Slice(p, a)
}

// Unpin releases what the Pinner pinned.
func (p *Pinner) Unpin() { p.p.Unpin() }

// GoString copies a NUL-terminated byte array (a fixed-size char field).
func GoString(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		return string(b[:i])
	}
	return string(b)
}

var (
	loadOnce            sync.Once
	loadErr             error
	getInstanceProcAddr uintptr
	global              struct {
		createInstance, enumerateInstanceVersion, enumerateInstanceExtensionProperties uintptr
	}
)

// Load opens the Vulkan loader and resolves the global entry points,
// once. Its error is one line naming the libraries tried.
func Load() error {
	loadOnce.Do(func() {
		lib, err := dl.Open(loaderNames()...)
		if err != nil {
			loadErr = fmt.Errorf("vulkan: no Vulkan loader: %w", err)
			return
		}
		p, err := lib.Sym("vkGetInstanceProcAddr")
		if err != nil {
			loadErr = fmt.Errorf("vulkan: %w", err)
			return
		}
		getInstanceProcAddr = p
		global.createInstance = instanceProc(0, "vkCreateInstance")
		global.enumerateInstanceVersion = instanceProc(0, "vkEnumerateInstanceVersion")
		global.enumerateInstanceExtensionProperties = instanceProc(0, "vkEnumerateInstanceExtensionProperties")
		if global.createInstance == 0 || global.enumerateInstanceExtensionProperties == 0 {
			loadErr = fmt.Errorf("vulkan: the loader lacks vkCreateInstance")
		}
	})
	return loadErr
}

func instanceProc(instance uintptr, name string) uintptr {
	var pin Pinner
	defer pin.Unpin()
	return call(getInstanceProcAddr, instance, pin.CString(name))
}

// InstanceVersion returns the loader's API version (1.0 for loaders that
// predate vkEnumerateInstanceVersion).
func InstanceVersion() uint32 {
	if global.enumerateInstanceVersion == 0 {
		return MakeVersion(1, 0, 0)
	}
	var v uint32
	if call(global.enumerateInstanceVersion, uintptr(unsafe.Pointer(&v))) != 0 {
		return MakeVersion(1, 0, 0)
	}
	return v
}

// InstanceExtensions lists the instance extensions the loader offers.
func InstanceExtensions() ([]string, error) {
	var n uint32
	if err := check("vkEnumerateInstanceExtensionProperties", call(global.enumerateInstanceExtensionProperties, 0, uintptr(unsafe.Pointer(&n)), 0)); err != nil {
		return nil, err
	}
	props := make([]ExtensionProperties, n)
	if n > 0 {
		if err := check("vkEnumerateInstanceExtensionProperties", call(global.enumerateInstanceExtensionProperties, 0, uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&props[0])))); err != nil {
			return nil, err
		}
	}
	names := make([]string, n)
	for i := range names {
		names[i] = GoString(props[i].ExtensionName[:])
	}
	return names, nil
}
