package placement

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	"inferno/backend/cuda"
)

// HostMemory returns the machine's memory in bytes (8 GiB where it
// cannot be read).
func HostMemory() int64 { return memTotal() }

// GPUMemory returns the memory of the GPU the cuda backend runs on, in
// bytes, or why there is none.
func GPUMemory() (int64, error) {
	if err := cuda.Available(); err != nil {
		return 0, err
	}
	n, err := cuda.TotalMemory(0)
	return int64(n), err
}

// memTotal returns the machine's memory in bytes, from /proc/meminfo, or
// 8 GiB where that cannot be read.
func memTotal() int64 {
	const fallback = 8 << 30
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return fallback
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// MemTotal:       24531640 kB
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 && fields[0] == "MemTotal:" && fields[2] == "kB" {
			if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil && kb > 0 {
				return kb << 10
			}
		}
	}
	return fallback
}
