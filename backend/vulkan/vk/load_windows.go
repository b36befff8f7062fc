//go:build windows

package vk

import "syscall"

// loaderNames is the Vulkan loader every Windows GPU driver installs.
var loaderNames = []string{"vulkan-1.dll"}

func openLibrary(name string) (uintptr, error) {
	h, err := syscall.LoadLibrary(name)
	return uintptr(h), err
}

func librarySym(lib uintptr, name string) (uintptr, error) {
	return syscall.GetProcAddress(syscall.Handle(lib), name)
}

// call calls a Vulkan function with integer and pointer arguments. Like
// syscall.Syscall, it keeps alive (and off the stack) what the arguments
// converted from unsafe.Pointer in the call expression point to.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := syscall.SyscallN(fn, args...)
	return r
}
