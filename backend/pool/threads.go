package pool

import "runtime"

// DefaultThreads is the number of threads New starts for threads <= 0:
// the performance cores' count where the OS tells them apart (macOS on
// Apple M-series: hw.perflevel0.physicalcpu, so that no thread waits on
// an efficiency core at every operation's join), runtime.NumCPU()
// elsewhere or when that count is not there.
func DefaultThreads() int {
	n := runtime.NumCPU()
	if p := perfCores(); p > 0 && p < n {
		return p
	}
	return n
}
