package pool

import "golang.org/x/sys/unix"

// perfCores returns the number of performance cores (the physical cores
// of performance level 0), or 0 where the sysctl is missing (Intel Macs,
// macOS before 12).
func perfCores() int {
	n, err := unix.SysctlUint32("hw.perflevel0.physicalcpu")
	if err != nil {
		return 0
	}
	return int(n)
}
