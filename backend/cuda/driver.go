// Package cuda runs the forward pass package arch describes (for models
// whose options are among Features) on an NVIDIA GPU through the CUDA
// driver API, loaded at run time through package internal/dl (purego on
// Linux; LoadLibrary on Windows): building needs no CUDA toolkit and no
// cgo, and a machine without a driver gets a one-line error from
// Available. It imports no model package: it takes an arch.Model.
//
// The weights are uploaded once; the KV cache lives on the GPU and is
// appended in place by the attention kernel; a decode step (every layer,
// the final norm, the output head and the argmax) is one CUDA graph replayed
// per token, reading back 4 bytes. See kernels/kernels.cu for the kernels,
// docs/ARCHITECTURE.md for the design and docs/PERF.md for the measurements.
package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"inferno/internal/dl"
)

// cuResult is a CUresult; 0 is CUDA_SUCCESS.
type cuResult uintptr

// Driver error codes the package looks at.
const (
	errOutOfMemory        = 2
	errNotInitialized     = 3
	errNoDevice           = 100
	errUnsupportedPTX     = 222
	errInvalidPTX         = 218
	errLaunchOutOfResouce = 701
	errLaunchFailed       = 719
)

// Error is a failed driver call.
type Error struct {
	Op   string // the driver function and what it was doing
	Code int
	Name string // CUDA_ERROR_...
	Desc string // the driver's description
}

func (e *Error) Error() string {
	s := fmt.Sprintf("cuda: %s: %s (%d)", e.Op, e.Name, e.Code)
	if e.Desc != "" {
		s += ": " + e.Desc
	}
	switch e.Code {
	case errUnsupportedPTX:
		s += " (the NVIDIA driver is older than the PTX the kernels were built with; update the driver)"
	case errLaunchFailed:
		s += " (a kernel faulted; the GPU context is unusable until the process exits)"
	}
	return s
}

// IsOutOfMemory reports whether err is a failed allocation on the GPU.
func IsOutOfMemory(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == errOutOfMemory
}

// driver holds the entry points of the driver library (libcuda.so.1;
// nvcuda.dll on Windows).
type driver struct {
	lib *dl.Lib

	cuInit, cuDriverGetVersion, cuDeviceGetCount, cuDeviceGet, cuDeviceGetName, cuDeviceGetAttribute,
	cuDeviceTotalMem, cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRelease, cuCtxSetCurrent,
	cuCtxSynchronize, cuMemGetInfo, cuMemAlloc, cuMemFree, cuMemAllocHost, cuMemFreeHost,
	cuMemcpyHtoD, cuMemcpyDtoH, cuMemcpyHtoDAsync, cuMemcpyDtoHAsync, cuMemcpyDtoDAsync, cuMemsetD8Async,
	cuModuleLoadDataEx, cuModuleUnload, cuModuleGetFunction, cuFuncSetAttribute, cuFuncGetAttribute,
	cuStreamCreate, cuStreamDestroy, cuStreamSynchronize, cuStreamBeginCapture, cuStreamEndCapture,
	cuGraphInstantiateWithFlags, cuGraphLaunch, cuGraphExecDestroy, cuGraphDestroy, cuLaunchKernel, cuLaunchKernelEx,
	cuOccupancyMaxActiveBlocksPerMultiprocessor,
	cuEventCreate, cuEventRecord, cuEventRecordWithFlags, cuEventSynchronize, cuEventElapsedTime, cuEventDestroy,
	cuGetErrorName, cuGetErrorString, cuMemHostGetDevicePointer, cuDevicePrimaryCtxSetFlags uintptr
}

var (
	drvOnce sync.Once
	drv     *driver
	drvErr  error
)

// driverLibrary is the file name of the CUDA driver library on this OS:
// nvcuda.dll, which NVIDIA's Windows driver installs in System32, on
// Windows; libcuda.so.1 elsewhere (macOS has no CUDA driver, and gets the
// loader's one-line reason).
func driverLibrary() string {
	if runtime.GOOS == "windows" {
		return "nvcuda.dll"
	}
	return "libcuda.so.1"
}

// loadDriver opens the driver library and resolves the entry points, once.
func loadDriver() (*driver, error) {
	drvOnce.Do(func() {
		lib, err := dl.Open(driverLibrary())
		if err != nil {
			drvErr = fmt.Errorf("cuda: no NVIDIA driver: %v", err)
			return
		}
		d := &driver{lib: lib}
		syms := []struct {
			p    *uintptr
			name string
		}{
			{&d.cuInit, "cuInit"},
			{&d.cuDriverGetVersion, "cuDriverGetVersion"},
			{&d.cuDeviceGetCount, "cuDeviceGetCount"},
			{&d.cuDeviceGet, "cuDeviceGet"},
			{&d.cuDeviceGetName, "cuDeviceGetName"},
			{&d.cuDeviceGetAttribute, "cuDeviceGetAttribute"},
			{&d.cuDeviceTotalMem, "cuDeviceTotalMem_v2"},
			{&d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
			{&d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"},
			{&d.cuCtxSetCurrent, "cuCtxSetCurrent"},
			{&d.cuCtxSynchronize, "cuCtxSynchronize"},
			{&d.cuMemGetInfo, "cuMemGetInfo_v2"},
			{&d.cuMemAlloc, "cuMemAlloc_v2"},
			{&d.cuMemFree, "cuMemFree_v2"},
			{&d.cuMemAllocHost, "cuMemAllocHost_v2"},
			{&d.cuMemFreeHost, "cuMemFreeHost"},
			{&d.cuMemcpyHtoD, "cuMemcpyHtoD_v2"},
			{&d.cuMemcpyDtoH, "cuMemcpyDtoH_v2"},
			{&d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"},
			{&d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"},
			{&d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"},
			{&d.cuMemsetD8Async, "cuMemsetD8Async"},
			{&d.cuModuleLoadDataEx, "cuModuleLoadDataEx"},
			{&d.cuModuleUnload, "cuModuleUnload"},
			{&d.cuModuleGetFunction, "cuModuleGetFunction"},
			{&d.cuFuncSetAttribute, "cuFuncSetAttribute"},
			{&d.cuFuncGetAttribute, "cuFuncGetAttribute"},
			{&d.cuStreamCreate, "cuStreamCreate"},
			{&d.cuStreamDestroy, "cuStreamDestroy_v2"},
			{&d.cuStreamSynchronize, "cuStreamSynchronize"},
			{&d.cuStreamBeginCapture, "cuStreamBeginCapture_v2"},
			{&d.cuStreamEndCapture, "cuStreamEndCapture"},
			{&d.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags"},
			{&d.cuGraphLaunch, "cuGraphLaunch"},
			{&d.cuGraphExecDestroy, "cuGraphExecDestroy"},
			{&d.cuGraphDestroy, "cuGraphDestroy"},
			{&d.cuLaunchKernel, "cuLaunchKernel"},
			{&d.cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor"},
			{&d.cuEventCreate, "cuEventCreate"},
			{&d.cuEventRecord, "cuEventRecord"},
			{&d.cuEventRecordWithFlags, "cuEventRecordWithFlags"},
			{&d.cuEventSynchronize, "cuEventSynchronize"},
			{&d.cuEventElapsedTime, "cuEventElapsedTime"},
			{&d.cuEventDestroy, "cuEventDestroy_v2"},
			{&d.cuGetErrorName, "cuGetErrorName"},
			{&d.cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2"},
			{&d.cuDevicePrimaryCtxSetFlags, "cuDevicePrimaryCtxSetFlags_v2"},
			{&d.cuGetErrorString, "cuGetErrorString"},
		}
		// Optional: programmatic dependent launch needs cuLaunchKernelEx (CUDA 11.8+).
		if p, err := lib.Sym("cuLaunchKernelEx"); err == nil {
			d.cuLaunchKernelEx = p
		}
		for _, s := range syms {
			p, err := lib.Sym(s.name)
			if err != nil {
				drvErr = fmt.Errorf("cuda: %s lacks %s (driver too old?)", lib.Name, s.name)
				return
			}
			*s.p = p
		}
		if err := d.check("cuInit", d.call(d.cuInit, 0)); err != nil {
			drvErr = err
			return
		}
		drv = d
	})
	return drv, drvErr
}

// call calls a driver function with integer and pointer arguments. Like
// syscall.Syscall, it keeps alive (and off the stack) what the arguments
// converted from unsafe.Pointer in the call expression point to.
//
//go:uintptrescapes
func (d *driver) call(fn uintptr, args ...uintptr) cuResult {
	return cuResult(uint32(dl.Call(fn, args...)))
}

// check turns a CUresult into an error naming op.
func (d *driver) check(op string, r cuResult) error {
	if r == 0 {
		return nil
	}
	e := &Error{Op: op, Code: int(r), Name: fmt.Sprintf("CUDA error %d", int(r))}
	var p uintptr
	if d.call(d.cuGetErrorName, uintptr(r), uintptr(unsafe.Pointer(&p))) == 0 && p != 0 {
		e.Name = cString(p)
	}
	p = 0
	if d.call(d.cuGetErrorString, uintptr(r), uintptr(unsafe.Pointer(&p))) == 0 && p != 0 {
		e.Desc = cString(p)
	}
	return e
}

// cString copies a NUL-terminated C string.
func cString(p uintptr) string {
	base := hostPtr(p)
	var b []byte
	for i := 0; i < 4096; i++ {
		c := *(*byte)(unsafe.Add(base, i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// Available reports whether the CUDA backend can run here: nil when the
// driver library (libcuda.so.1; nvcuda.dll on Windows) loads, initializes
// and sees at least one device; otherwise a one-line reason.
func Available() error {
	d, err := loadDriver()
	if err != nil {
		return err
	}
	var n int32
	if err := d.check("cuDeviceGetCount", d.call(d.cuDeviceGetCount, uintptr(unsafe.Pointer(&n)))); err != nil {
		return err
	}
	if n == 0 {
		return errors.New("cuda: the NVIDIA driver sees no GPU")
	}
	return nil
}

// ordinalDevice returns the driver's device of GPU ordinal.
func ordinalDevice(d *driver, ordinal int) (int32, error) {
	var n int32
	if err := d.check("cuDeviceGetCount", d.call(d.cuDeviceGetCount, uintptr(unsafe.Pointer(&n)))); err != nil {
		return 0, err
	}
	if ordinal < 0 || ordinal >= int(n) {
		return 0, fmt.Errorf("cuda: no GPU %d (the driver sees %d)", ordinal, n)
	}
	var dev int32
	if err := d.check("cuDeviceGet", d.call(d.cuDeviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(ordinal))); err != nil {
		return 0, err
	}
	return dev, nil
}

// DeviceName returns the name of GPU ordinal, without opening a context
// on it.
func DeviceName(ordinal int) (string, error) {
	d, err := loadDriver()
	if err != nil {
		return "", err
	}
	dev, err := ordinalDevice(d, ordinal)
	if err != nil {
		return "", err
	}
	name := make([]byte, 256)
	if err := d.check("cuDeviceGetName", d.call(d.cuDeviceGetName, uintptr(unsafe.Pointer(&name[0])), 256, uintptr(dev))); err != nil {
		return "", err
	}
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	return string(name), nil
}

// TotalMemory returns the memory of GPU ordinal in bytes, without
// opening a context on it.
func TotalMemory(ordinal int) (uint64, error) {
	d, err := loadDriver()
	if err != nil {
		return 0, err
	}
	dev, err := ordinalDevice(d, ordinal)
	if err != nil {
		return 0, err
	}
	var total uint64
	if err := d.check("cuDeviceTotalMem", d.call(d.cuDeviceTotalMem, uintptr(unsafe.Pointer(&total)), uintptr(dev))); err != nil {
		return 0, err
	}
	return total, nil
}

// DriverVersion returns the driver's CUDA version as major*1000+minor*10.
func DriverVersion() (int, error) {
	d, err := loadDriver()
	if err != nil {
		return 0, err
	}
	var v int32
	if err := d.check("cuDriverGetVersion", d.call(d.cuDriverGetVersion, uintptr(unsafe.Pointer(&v)))); err != nil {
		return 0, err
	}
	return int(v), nil
}

// hostPtr converts an address of memory Go does not manage (driver strings,
// page-locked host buffers) to a pointer.
func hostPtr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
