package constrain

import (
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

var getThreadTimes = windows.NewLazySystemDLL("kernel32.dll").NewProc("GetThreadTimes")

// threadCPU returns the CPU time of the calling thread from
// GetThreadTimes. Windows counts it in scheduler ticks (about 15.6 ms), so
// there the per-token CPU quantiles of BenchmarkMask read 0 or a tick and
// only its wall-time figures measure a token.
func threadCPU() time.Duration {
	var creation, exit, kernel, user windows.Filetime
	r, _, _ := getThreadTimes.Call(uintptr(windows.CurrentThread()),
		uintptr(unsafe.Pointer(&creation)), uintptr(unsafe.Pointer(&exit)),
		uintptr(unsafe.Pointer(&kernel)), uintptr(unsafe.Pointer(&user)))
	if r == 0 {
		return 0
	}
	return filetime(kernel) + filetime(user)
}

// processCPU returns the CPU time of the process, garbage collection
// included, from GetProcessTimes (in scheduler ticks, as threadCPU).
func processCPU() time.Duration {
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user); err != nil {
		return 0
	}
	return filetime(kernel) + filetime(user)
}

// filetime converts a FILETIME holding a duration (100 ns units) to a
// time.Duration.
func filetime(f windows.Filetime) time.Duration {
	return time.Duration(uint64(f.HighDateTime)<<32|uint64(f.LowDateTime)) * 100
}
