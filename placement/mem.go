package placement

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"inferno/backend/cuda"
	"inferno/backend/vulkan"
)

// HostMemory returns the machine's memory in bytes (8 GiB where it
// cannot be read).
func HostMemory() int64 { return memTotal() }

// GPUMemory returns the memory of the GPU auto would run on, in bytes:
// CUDA's device, else the Vulkan device vulkan.Pick chooses; or why there
// is none.
func GPUMemory() (int64, error) {
	cudaErr := cuda.Available()
	if cudaErr == nil {
		n, err := cuda.TotalMemory(0)
		return int64(n), err
	}
	i, err := vulkan.Pick()
	if err != nil {
		return 0, fmt.Errorf("cuda: %v; vulkan: %w", cudaErr, err)
	}
	ds, _ := vulkan.Devices()
	return int64(ds[i].MemoryBytes), nil
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
