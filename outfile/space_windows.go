package outfile

import "golang.org/x/sys/windows"

// FreeSpace returns the bytes the user may still write to the volume
// holding dir (GetDiskFreeSpaceEx, which counts the user's disk quota).
func FreeSpace(dir string) (int64, bool) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, false
	}
	var free, total, totalFree uint64
	if err := windows.GetDiskFreeSpaceEx(p, &free, &total, &totalFree); err != nil {
		return 0, false
	}
	return int64(min(free, 1<<62)), true
}
