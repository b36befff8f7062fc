// Package dl opens shared libraries and calls their C functions at run
// time without cgo, on Linux and macOS through purego (dlopen and dlsym)
// and on Windows through LoadLibraryEx and GetProcAddress. The GPU
// backends load their drivers with it, so that building needs no vendor
// toolkit and a machine without the driver gets a one-line error instead
// of a binary that does not start.
package dl

import (
	"fmt"
	"strings"
)

// Lib is an open shared library.
type Lib struct {
	// Name is the name, of those given to Open, that loaded.
	Name   string
	handle uintptr
}

// Open loads the first of names that the system's loader finds (each a
// file name the loader searches for, or a path) and returns it. When none
// loads, the error names every name tried with the system's reason, on one
// line.
func Open(names ...string) (*Lib, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("dl: no library named")
	}
	tried := make([]string, 0, len(names))
	for _, name := range names {
		h, err := open(name)
		if err == nil {
			return &Lib{Name: name, handle: h}, nil
		}
		// dlerror's message begins with the name; LoadLibrary's does not.
		reason := strings.TrimPrefix(oneLine(err.Error()), name+": ")
		tried = append(tried, fmt.Sprintf("%s (%s)", name, reason))
	}
	return nil, fmt.Errorf("dl: cannot load %s", strings.Join(tried, " or "))
}

// Sym returns the address of the function or variable name in l, or an
// error naming both when l does not export it.
func (l *Lib) Sym(name string) (uintptr, error) {
	p, err := sym(l.handle, name)
	if err != nil {
		return 0, fmt.Errorf("dl: %s has no symbol %s (%s)", l.Name, name, oneLine(err.Error()))
	}
	if p == 0 {
		return 0, fmt.Errorf("dl: %s has no symbol %s (its address is 0)", l.Name, name)
	}
	return p, nil
}

// oneLine joins the lines of a system message with spaces and trims it.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
