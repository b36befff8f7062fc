//go:build windows

package dl

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// open is LoadLibraryEx with LOAD_LIBRARY_SEARCH_DEFAULT_DIRS: a bare
// name is looked for in the executable's folder and System32 (where GPU
// drivers install nvcuda.dll and vulkan-1.dll), never in the current
// folder or along PATH; a full path loads that file.
func open(name string) (uintptr, error) {
	h, err := windows.LoadLibraryEx(name, 0, windows.LOAD_LIBRARY_SEARCH_DEFAULT_DIRS)
	return uintptr(h), err
}

// sym is GetProcAddress.
func sym(handle uintptr, name string) (uintptr, error) {
	return windows.GetProcAddress(windows.Handle(handle), name)
}

// Call calls the C function at fn with integer and pointer arguments and
// returns its integer result, through syscall.SyscallN (the Windows x64
// calling convention). Like syscall.SyscallN, it keeps alive, and off the
// stack, what the arguments converted from unsafe.Pointer in the call
// expression point to; a wrapper that passes its own arguments through
// must carry the same directive.
//
//go:uintptrescapes
func Call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := syscall.SyscallN(fn, args...)
	return r
}
