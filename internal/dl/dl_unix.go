//go:build darwin || freebsd || linux || netbsd

package dl

import "github.com/ebitengine/purego"

// open is dlopen with RTLD_NOW|RTLD_GLOBAL: every symbol resolved at load,
// and the library's symbols visible to those it loads in turn (drivers
// that open plugins of their own rely on that).
func open(name string) (uintptr, error) {
	return purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

// sym is dlsym.
func sym(handle uintptr, name string) (uintptr, error) {
	return purego.Dlsym(handle, name)
}

// Call calls the C function at fn with integer and pointer arguments (at
// most 15; floating-point arguments are not supported) and returns its
// integer result, through purego.SyscallN. Like syscall.SyscallN, it
// keeps alive, and off the stack, what the arguments converted from
// unsafe.Pointer in the call expression point to; a wrapper that passes
// its own arguments through must carry the same directive.
//
//go:uintptrescapes
func Call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
