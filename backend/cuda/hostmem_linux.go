package cuda

import (
	"bufio"
	"cmp"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fileMapping is a range of the process's address space mapped from a
// file, shared and without write permission.
type fileMapping struct{ lo, hi uintptr }

// readOnlyFileMappings lists the read-only shared file mappings of the
// process (/proc/self/maps: an inode, no 'w', 's'), as gguf maps a model
// file. Private mappings are left out: a private page changed while it was
// writable (relocated data of a program) would be lost, not read again.
func readOnlyFileMappings() []fileMapping {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []fileMapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 7f1c2a000000-7f1c3a000000 r--s 00000000 08:01 1234 /path/model.gguf
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[4] == "0" || len(fields[1]) < 4 || fields[1][1] == 'w' || fields[1][3] != 's' {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		l, err1 := strconv.ParseUint(lo, 16, 64)
		h, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 == nil && err2 == nil && h > l {
			out = append(out, fileMapping{uintptr(l), uintptr(h)})
		}
	}
	return out
}

// releaseHostPages drops from the process the pages of each buffer that
// lies in a read-only file mapping (the GGUF file's tensor data, once it
// is on the GPU): madvise(MADV_DONTNEED), so resident memory is not the
// size of the file. The mapping stays: a later read of those bytes (a CPU
// backend on the same model, say) faults them in again from the file.
// Buffers elsewhere (models parsed from memory, converted copies) are left
// alone: there MADV_DONTNEED would zero them. Buffers that touch or overlap
// (the views of one tensor) are released as one range. It returns the
// bytes released.
func releaseHostPages(bufs ...[]byte) int64 {
	maps := readOnlyFileMappings()
	page := uintptr(os.Getpagesize())
	type span struct{ lo, hi uintptr }
	var spans []span
	for _, b := range bufs {
		if len(b) > 0 {
			lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
			spans = append(spans, span{lo, lo + uintptr(len(b))})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	var n int64
	for i := 0; i < len(spans); {
		lo, hi := spans[i].lo, spans[i].hi
		for i++; i < len(spans) && spans[i].lo <= hi; i++ {
			hi = max(hi, spans[i].hi)
		}
		for _, m := range maps {
			if lo < m.lo || hi > m.hi {
				continue
			}
			// Whole pages, rounded outwards within the mapping: a
			// neighbour's bytes on a shared page come back from the file.
			a := max(m.lo, lo&^(page-1))
			e := min(m.hi, (hi+page-1)&^(page-1))
			if _, _, errno := unix.Syscall(unix.SYS_MADVISE, a, e-a, unix.MADV_DONTNEED); errno == 0 {
				n += int64(e - a)
			}
			break
		}
	}
	return n
}

// residentBytes returns the process's resident memory (VmRSS), or -1.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				return -1
			}
			if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return -1
}
