package vk

import (
	"runtime"

	"inferno/internal/dl"
)

// loaderNames are the Vulkan loaders tried in order: Windows' (every GPU
// driver installs it), Linux's, then macOS's (the Vulkan SDK's or
// Homebrew's loader, then MoltenVK itself, a Vulkan implementation
// without a loader).
func loaderNames() []string {
	switch runtime.GOOS {
	case "windows":
		return []string{"vulkan-1.dll"}
	case "darwin":
		return []string{"libvulkan.1.dylib", "libMoltenVK.dylib"}
	}
	return []string{"libvulkan.so.1", "libvulkan.so"}
}

// call calls a Vulkan function with integer and pointer arguments. Like
// syscall.Syscall, it keeps alive (and off the stack) what the arguments
// converted from unsafe.Pointer in the call expression point to.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) uintptr { return dl.Call(fn, args...) }
