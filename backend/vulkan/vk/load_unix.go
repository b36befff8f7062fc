//go:build !windows

package vk

import "github.com/ebitengine/purego"

// loaderNames are the Vulkan loaders tried in order: Linux's, then macOS's
// (the Vulkan SDK's or Homebrew's loader, then MoltenVK itself, which is
// a Vulkan implementation without a loader).
var loaderNames = []string{"libvulkan.so.1", "libvulkan.so", "libvulkan.1.dylib", "libMoltenVK.dylib"}

func openLibrary(name string) (uintptr, error) {
	return purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

func librarySym(lib uintptr, name string) (uintptr, error) { return purego.Dlsym(lib, name) }

// call calls a Vulkan function with integer and pointer arguments. Like
// syscall.Syscall, it keeps alive (and off the stack) what the arguments
// converted from unsafe.Pointer in the call expression point to.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
