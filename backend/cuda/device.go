package cuda

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"unsafe"
)

// Driver enum values used here.
const (
	attrMaxThreadsPerBlock    = 1
	attrL2CacheSize           = 38
	attrMultiprocessorCount   = 16
	attrComputeCapMajor       = 75
	attrComputeCapMinor       = 76
	attrMaxSharedPerBlockOpt  = 97
	funcAttrSharedSizeBytes   = 1
	funcAttrNumRegs           = 4
	funcAttrMaxDynamicShared  = 8
	jitInfoLogBuffer          = 3
	jitInfoLogBufferSize      = 4
	jitErrorLogBuffer         = 5
	jitErrorLogBufferSize     = 6
	streamNonBlocking         = 1
	captureModeThreadLocal    = 1
	hostStagingBytes          = 64 << 10
	hostArgsOff               = 0   // 32 argument values of 8 bytes
	hostArgPtrsOff            = 256 // 32 pointers to them
	hostLaunchCfgOff          = 512 // a CUlaunchConfig (56 bytes)
	hostLaunchAttrOff         = 576 // its one CUlaunchAttribute (72 bytes)
	launchAttrProgrammatic    = 6   // CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
	hostInfoLogOff            = 8 << 10
	hostErrLogOff             = 24 << 10
	hostLogBytes              = 16 << 10
	maxKernelArgs             = 32
	defaultStaticSharedLimit  = 48 << 10
	minComputeCapability      = 80
	minComputeCapabilityHuman = "8.0"
)

// device is one GPU's primary context, a stream, the kernel module and the
// allocations made through it. Every method must run on a goroutine locked
// to its OS thread with the context current: call enter first.
type device struct {
	d      *driver
	dev    int32
	ctx    uintptr
	stream uintptr
	mod    uintptr
	host   uintptr    // page-locked staging (hostStagingBytes): launch arguments and the JIT's logs
	argBuf [4]uintptr // the arguments of callq
	funcs  map[string]uintptr

	Name      string
	SMs       int
	CC        int // major*10 + minor
	SmemOptin int
	Total     uint64

	allocs map[uint64]allocation
	inUse  uint64

	ptxWhat string // which PTX was loaded
	pdl     bool   // kernels may be launched with programmatic dependent launch
}

type allocation struct {
	size uint64
	what string
}

// newDevice opens GPU ordinal, makes its primary context current on the
// calling (locked) thread and loads the kernels.
func newDevice(ordinal int) (*device, error) {
	d, err := loadDriver()
	if err != nil {
		return nil, err
	}
	g := &device{d: d, funcs: map[string]uintptr{}, allocs: map[uint64]allocation{}}
	var n int32
	if err := d.check("cuDeviceGetCount", d.call(d.cuDeviceGetCount, uintptr(unsafe.Pointer(&n)))); err != nil {
		return nil, err
	}
	if ordinal < 0 || int(ordinal) >= int(n) {
		return nil, fmt.Errorf("cuda: no GPU %d (the driver sees %d)", ordinal, n)
	}
	if err := d.check("cuDeviceGet", d.call(d.cuDeviceGet, uintptr(unsafe.Pointer(&g.dev)), uintptr(ordinal))); err != nil {
		return nil, err
	}
	var name [256]byte
	if err := d.check("cuDeviceGetName", d.call(d.cuDeviceGetName, uintptr(unsafe.Pointer(&name[0])), 256, uintptr(g.dev))); err != nil {
		return nil, err
	}
	g.Name = strings.TrimRight(string(name[:]), "\x00")
	attr := func(a int) int {
		var v int32
		d.call(d.cuDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a), uintptr(g.dev))
		return int(v)
	}
	g.SMs = attr(attrMultiprocessorCount)
	g.CC = attr(attrComputeCapMajor)*10 + attr(attrComputeCapMinor)
	g.SmemOptin = attr(attrMaxSharedPerBlockOpt)
	d.call(d.cuDeviceTotalMem, uintptr(unsafe.Pointer(&g.Total)), uintptr(g.dev))
	if g.CC < minComputeCapability {
		return nil, fmt.Errorf("cuda: %s has compute capability %d.%d; inferno's kernels need %s or newer", g.Name, g.CC/10, g.CC%10, minComputeCapabilityHuman)
	}
	if err := d.check("cuDevicePrimaryCtxRetain", d.call(d.cuDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&g.ctx)), uintptr(g.dev))); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			g.close()
		}
	}()
	if err := d.check("cuCtxSetCurrent", d.call(d.cuCtxSetCurrent, g.ctx)); err != nil {
		return nil, err
	}
	if err := d.check("cuStreamCreate", d.call(d.cuStreamCreate, uintptr(unsafe.Pointer(&g.stream)), streamNonBlocking)); err != nil {
		return nil, err
	}
	if err := d.check("cuMemAllocHost (staging)", d.call(d.cuMemAllocHost, uintptr(unsafe.Pointer(&g.host)), hostStagingBytes)); err != nil {
		return nil, err
	}
	if err := g.loadModule(); err != nil {
		return nil, err
	}
	ok = true
	return g, nil
}

// enter locks the calling goroutine to its thread and makes the context
// current there; exit undoes the lock.
func (g *device) enter() error {
	runtime.LockOSThread()
	if err := g.d.check("cuCtxSetCurrent", g.callq(g.d.cuCtxSetCurrent, g.ctx)); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	return nil
}

func (g *device) exit() { runtime.UnlockOSThread() }

// callq calls a driver function whose arguments are no Go pointers
// (handles, device and page-locked host addresses, sizes) without
// allocating: driver.call's arguments escape (go:uintptrescapes), so each
// of its calls allocates them; callq passes them in the device's own
// buffer instead. The calls of a decode step (enter, the copy of its
// inputs, the graph launch) use it, so that a step allocates nothing.
func (g *device) callq(fn uintptr, args ...uintptr) cuResult {
	n := copy(g.argBuf[:], args)
	return g.d.call(fn, g.argBuf[:n]...)
}

// loadModule loads the kernel image kernelSource chooses (image.go), and
// the embedded PTX where the driver refuses an embedded cubin.
func (g *device) loadModule() error {
	img, err := kernelSource(g.CC)
	if err != nil {
		return err
	}
	err = g.loadImage(img)
	if err != nil && img.fallback != "" {
		// A cubin the driver refuses (too old a driver for the
		// toolkit that built it): the PTX, compiled by the driver.
		first := err
		if img, err = embeddedPTX(img.fallback, img.pdl); err != nil {
			return err
		}
		if err = g.loadImage(img); err != nil {
			return fmt.Errorf("%w (and the cubin: %v)", err, first)
		}
	}
	return err
}

// loadImage loads a module image (PTX or cubin).
func (g *device) loadImage(k kernelImage) error {
	g.ptxWhat, g.pdl = k.what, k.pdl && g.d.cuLaunchKernelEx != 0
	img, what := k.data, k.what
	opts := []int32{jitInfoLogBuffer, jitInfoLogBufferSize, jitErrorLogBuffer, jitErrorLogBufferSize}
	vals := []uintptr{g.host + hostInfoLogOff, hostLogBytes, g.host + hostErrLogOff, hostLogBytes}
	*(*byte)(hostPtr(g.host + hostErrLogOff)) = 0
	r := g.d.call(g.d.cuModuleLoadDataEx, uintptr(unsafe.Pointer(&g.mod)), uintptr(unsafe.Pointer(&img[0])),
		uintptr(len(opts)), uintptr(unsafe.Pointer(&opts[0])), uintptr(unsafe.Pointer(&vals[0])))
	runtime.KeepAlive(img)
	if err := g.d.check("cuModuleLoadDataEx ("+what+")", r); err != nil {
		if log := strings.TrimSpace(cString(g.host + hostErrLogOff)); log != "" {
			return fmt.Errorf("%w\n%s", err, log)
		}
		return err
	}
	return nil
}

// fn returns the kernel called name.
func (g *device) fn(name string) (uintptr, error) {
	if f, ok := g.funcs[name]; ok {
		return f, nil
	}
	var f uintptr
	cname := append([]byte(name), 0)
	if err := g.d.check("cuModuleGetFunction "+name, g.d.call(g.d.cuModuleGetFunction, uintptr(unsafe.Pointer(&f)), g.mod, uintptr(unsafe.Pointer(&cname[0])))); err != nil {
		return 0, err
	}
	g.funcs[name] = f
	return f, nil
}

// funcAttr reads an attribute of kernel f.
func (g *device) funcAttr(f uintptr, a int) int {
	var v int32
	g.d.call(g.d.cuFuncGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a), f)
	return int(v)
}

// occupancy returns how many blocks of kernel name fit on one multiprocessor.
func (g *device) occupancy(name string, block, smem int) (int, error) {
	f, err := g.fn(name)
	if err != nil {
		return 0, err
	}
	var n int32
	if err := g.d.check("cuOccupancyMaxActiveBlocksPerMultiprocessor "+name,
		g.d.call(g.d.cuOccupancyMaxActiveBlocksPerMultiprocessor, uintptr(unsafe.Pointer(&n)), f, uintptr(block), uintptr(smem))); err != nil {
		return 0, err
	}
	return max(int(n), 1), nil
}

// allowSmem lets kernel f use smem bytes of dynamic shared memory.
func (g *device) allowSmem(f uintptr, name string, smem int) error {
	static := g.funcAttr(f, funcAttrSharedSizeBytes)
	if static+smem <= defaultStaticSharedLimit {
		return nil
	}
	if static+smem > g.SmemOptin {
		return fmt.Errorf("cuda: kernel %s needs %d bytes of shared memory, the GPU allows %d per block", name, static+smem, g.SmemOptin)
	}
	return g.d.check("cuFuncSetAttribute "+name, g.d.call(g.d.cuFuncSetAttribute, f, funcAttrMaxDynamicShared, uintptr(smem)))
}

// memInfo returns the free and total device memory.
func (g *device) memInfo() (free, total uint64) {
	g.d.call(g.d.cuMemGetInfo, uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total)))
	return
}

// memoryInfo returns the device memory free now and in all, or the
// driver's error.
func (g *device) memoryInfo() (free, total uint64, err error) {
	r := g.d.call(g.d.cuMemGetInfo, uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total)))
	if err := g.d.check("cuMemGetInfo", r); err != nil {
		return 0, 0, fmt.Errorf("cuda: reading the free memory of %s: %w", g.Name, err)
	}
	return free, total, nil
}

// freeMemory returns the device memory free now, or the driver's error.
func (g *device) freeMemory() (uint64, error) {
	var free, total uint64
	r := g.d.call(g.d.cuMemGetInfo, uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total)))
	if err := g.d.check("cuMemGetInfo", r); err != nil {
		return 0, fmt.Errorf("cuda: reading the free memory of %s: %w", g.Name, err)
	}
	return free, nil
}

// alloc allocates size bytes of device memory for what (named in errors).
func (g *device) alloc(size uint64, what string) (uint64, error) {
	if size == 0 {
		size = 256
	}
	var p uint64
	r := g.d.call(g.d.cuMemAlloc, uintptr(unsafe.Pointer(&p)), uintptr(size))
	if r != 0 {
		err := g.d.check("cuMemAlloc", r)
		if r == errOutOfMemory {
			free, total := g.memInfo()
			return 0, fmt.Errorf("cuda: out of GPU memory allocating %.1f MiB for %s (%.0f MiB free of %.0f MiB, %.0f MiB held by this runner): %w",
				mib(size), what, mib(free), mib(total), mib(g.inUse), err)
		}
		return 0, fmt.Errorf("allocating %s: %w", what, err)
	}
	g.allocs[p] = allocation{size, what}
	g.inUse += size
	return p, nil
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// free releases an allocation made by alloc (0 is ignored).
func (g *device) free(p uint64) {
	if a, ok := g.allocs[p]; ok {
		g.d.call(g.d.cuMemFree, uintptr(p))
		delete(g.allocs, p)
		g.inUse -= a.size
	}
}

// upload copies host bytes to device memory and returns when they are
// there. The copy is ordered on the runner's stream and then waited for: a
// plain cuMemcpyHtoD runs on the legacy stream, which the runner's
// non-blocking stream does not wait for, and from pageable memory it may
// return before the bytes have reached the device.
func (g *device) upload(dst uint64, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	if err := g.d.check("cuMemcpyHtoDAsync", g.d.call(g.d.cuMemcpyHtoDAsync, uintptr(dst), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)), g.stream)); err != nil {
		return err
	}
	return g.sync("upload")
}

// download copies device memory to host bytes (synchronously).
func (g *device) download(dst []byte, src uint64) error {
	if len(dst) == 0 {
		return nil
	}
	return g.d.check("cuMemcpyDtoH", g.d.call(g.d.cuMemcpyDtoH, uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(len(dst))))
}

// uploadF32 and friends view typed slices as bytes.
func f32Bytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

func f64Bytes(v []float64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 8*len(v))
}

func i32Bytes(v []int32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

// memsetAsync zeroes n bytes at p on the stream.
func (g *device) memsetAsync(p uint64, n uint64) error {
	return g.d.check("cuMemsetD8Async", g.d.call(g.d.cuMemsetD8Async, uintptr(p), 0, uintptr(n), g.stream))
}

// copyHtoDAsync copies from the page-locked staging area (offset off) to
// the device on the stream; captured into a graph, it copies at each replay.
func (g *device) copyHtoDAsync(dst uint64, off, n uintptr) error {
	return g.d.check("cuMemcpyHtoDAsync", g.d.call(g.d.cuMemcpyHtoDAsync, uintptr(dst), g.host+off, n, g.stream))
}

// copyDtoHAsync copies from the device to the staging area (offset off).
func (g *device) copyDtoHAsync(off uintptr, src uint64, n uintptr) error {
	return g.d.check("cuMemcpyDtoHAsync", g.d.call(g.d.cuMemcpyDtoHAsync, g.host+off, uintptr(src), n, g.stream))
}

func (g *device) copyDtoDAsync(dst, src uint64, n uint64) error {
	return g.d.check("cuMemcpyDtoDAsync", g.d.call(g.d.cuMemcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(n), g.stream))
}

// Kernel arguments are passed as 8-byte slots; 32-bit values sit in the low
// half (little-endian), where the kernel reads them.
func i32(v int) uint64     { return uint64(uint32(int32(v))) }
func f32(v float32) uint64 { return uint64(math.Float32bits(v)) }

// launch enqueues kernel name on the stream.
func (g *device) launch(name string, grid [3]uint32, block uint32, smem uint32, args ...uint64) error {
	return g.launchEx(false, name, grid, block, smem, args...)
}

// launchEx enqueues kernel name; with pdl (and a GPU and PTX that support
// it) the kernel may start while its predecessor finishes, waiting for it
// inside (griddepcontrol.wait).
func (g *device) launchEx(pdl bool, name string, grid [3]uint32, block uint32, smem uint32, args ...uint64) error {
	f, err := g.fn(name)
	if err != nil {
		return err
	}
	if len(args) > maxKernelArgs {
		return fmt.Errorf("cuda: %d arguments to %s, at most %d", len(args), name, maxKernelArgs)
	}
	for i := range 3 {
		if grid[i] == 0 {
			grid[i] = 1
		}
	}
	vals := g.host + hostArgsOff
	ptrs := g.host + hostArgPtrsOff
	for i, a := range args {
		*(*uint64)(hostPtr(vals + uintptr(8*i))) = a
		*(*uintptr)(hostPtr(ptrs + uintptr(8*i))) = vals + uintptr(8*i)
	}
	var r cuResult
	if pdl && g.pdl {
		cfg := g.host + hostLaunchCfgOff
		attr := g.host + hostLaunchAttrOff
		u32 := func(off uintptr, v uint32) { *(*uint32)(hostPtr(cfg + off)) = v }
		u32(0, grid[0])
		u32(4, grid[1])
		u32(8, grid[2])
		u32(12, block)
		u32(16, 1)
		u32(20, 1)
		u32(24, smem)
		*(*uintptr)(hostPtr(cfg + 32)) = g.stream
		*(*uintptr)(hostPtr(cfg + 40)) = attr
		u32(48, 1)
		clear(unsafe.Slice((*byte)(hostPtr(attr)), 72))
		*(*uint32)(hostPtr(attr)) = launchAttrProgrammatic
		*(*int32)(hostPtr(attr + 8)) = 1
		r = g.d.call(g.d.cuLaunchKernelEx, cfg, f, ptrs, 0)
	} else {
		r = g.d.call(g.d.cuLaunchKernel, f, uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]), uintptr(block), 1, 1,
			uintptr(smem), g.stream, ptrs, 0)
	}
	if r != 0 {
		return g.d.check(fmt.Sprintf("cuLaunchKernel %s grid %v block %d smem %d", name, grid, block, smem), r)
	}
	return nil
}

// sync waits for the stream; op names what was running, for the error.
func (g *device) sync(op string) error {
	return g.d.check("cuStreamSynchronize after "+op, g.d.call(g.d.cuStreamSynchronize, g.stream))
}

// beginCapture starts recording the stream's work into a graph.
func (g *device) beginCapture() error {
	return g.d.check("cuStreamBeginCapture", g.d.call(g.d.cuStreamBeginCapture, g.stream, captureModeThreadLocal))
}

// endCapture stops recording and instantiates the graph.
func (g *device) endCapture() (graph, exec uintptr, err error) {
	if err := g.d.check("cuStreamEndCapture", g.d.call(g.d.cuStreamEndCapture, g.stream, uintptr(unsafe.Pointer(&graph)))); err != nil {
		return 0, 0, err
	}
	if err := g.d.check("cuGraphInstantiateWithFlags", g.d.call(g.d.cuGraphInstantiateWithFlags, uintptr(unsafe.Pointer(&exec)), graph, 0)); err != nil {
		g.d.call(g.d.cuGraphDestroy, graph)
		return 0, 0, err
	}
	return graph, exec, nil
}

func (g *device) launchGraph(exec uintptr) error {
	return g.d.check("cuGraphLaunch", g.callq(g.d.cuGraphLaunch, exec, g.stream))
}

func (g *device) destroyGraph(graph, exec uintptr) {
	if exec != 0 {
		g.d.call(g.d.cuGraphExecDestroy, exec)
	}
	if graph != 0 {
		g.d.call(g.d.cuGraphDestroy, graph)
	}
}

// event timing, for benchmarks.
func (g *device) newEvent() (uintptr, error) {
	var e uintptr
	err := g.d.check("cuEventCreate", g.d.call(g.d.cuEventCreate, uintptr(unsafe.Pointer(&e)), 0))
	return e, err
}

func (g *device) record(e uintptr) error {
	return g.d.check("cuEventRecord", g.d.call(g.d.cuEventRecord, e, g.stream))
}

// recordExternal records e on the stream; during capture it becomes an
// event record node of the graph (CU_EVENT_RECORD_EXTERNAL), so a replay
// timestamps it.
func (g *device) recordExternal(e uintptr) error {
	return g.d.check("cuEventRecordWithFlags", g.d.call(g.d.cuEventRecordWithFlags, e, g.stream, 1))
}

func (g *device) elapsed(a, b uintptr) (float32, error) {
	if err := g.d.check("cuEventSynchronize", g.d.call(g.d.cuEventSynchronize, b)); err != nil {
		return 0, err
	}
	var ms float32
	err := g.d.check("cuEventElapsedTime", g.d.call(g.d.cuEventElapsedTime, uintptr(unsafe.Pointer(&ms)), a, b))
	return ms, err
}

func (g *device) destroyEvent(e uintptr) { g.d.call(g.d.cuEventDestroy, e) }

// allocationsSummary lists live allocations, largest first (for errors and tests).
func (g *device) allocationsSummary() string {
	type kv struct {
		what string
		n    uint64
	}
	m := map[string]uint64{}
	for _, a := range g.allocs {
		m[a.what] += a.size
	}
	var l []kv
	for k, v := range m {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].n > l[j].n })
	var b strings.Builder
	for _, e := range l {
		fmt.Fprintf(&b, "%s %.1f MiB; ", e.what, mib(e.n))
	}
	return b.String()
}

// close frees every allocation, the stream, the module and the staging
// area, and releases the primary context. The caller has entered.
func (g *device) close() {
	if g.ctx == 0 {
		return
	}
	g.d.call(g.d.cuCtxSetCurrent, g.ctx)
	if g.stream != 0 {
		g.d.call(g.d.cuStreamSynchronize, g.stream)
	}
	for p := range g.allocs {
		g.free(p)
	}
	if g.mod != 0 {
		g.d.call(g.d.cuModuleUnload, g.mod)
		g.mod = 0
	}
	if g.stream != 0 {
		g.d.call(g.d.cuStreamDestroy, g.stream)
		g.stream = 0
	}
	if g.host != 0 {
		g.d.call(g.d.cuMemFreeHost, g.host)
		g.host = 0
	}
	g.d.call(g.d.cuDevicePrimaryCtxRelease, uintptr(g.dev))
	g.ctx = 0
}
