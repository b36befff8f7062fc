package vulkan

import (
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"inferno/backend/vulkan/vk"
	"inferno/gguf"
)

// testDevice opens the default Vulkan device, or skips the test where
// there is none (no loader, no driver).
func testDevice(t testing.TB) *Device {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("no Vulkan device: %v", err)
	}
	d, err := Open(-1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestDevices(t *testing.T) {
	ds, err := Devices()
	if err != nil {
		t.Skipf("no Vulkan loader: %v", err)
	}
	for _, d := range ds {
		t.Log(d.String())
		if d.Name == "" || d.SubgroupSize == 0 {
			t.Errorf("device %d: incomplete description %+v", d.Index, d)
		}
	}
}

func TestBufferRoundTrip(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewPCG(1, 2))
	// Larger than the staging buffer, so Write and Read go in chunks.
	src := make([]byte, stagingBytes+12345)
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	b, err := d.NewBuffer(int64(len(src)) + 64)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if err := d.Write(b, 32, src); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(src))
	if err := d.Read(b, 32, got); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != src[i] {
			t.Fatalf("byte %d: got %d want %d", i, got[i], src[i])
		}
	}
	if err := d.Write(b, b.Size()-2, src[:4]); err == nil {
		t.Error("a write past the end was accepted")
	}
	if err := d.Fill(b, 0, 8, 0x01020304); err != nil {
		t.Fatal(err)
	}
	if err := d.Read(b, 0, got[:8]); err != nil || got[0] != 4 || got[7] != 1 {
		t.Errorf("fill: %v %v", got[:8], err)
	}
}

// compileGLSL compiles a test shader with glslc, or skips without it.
func compileGLSL(t *testing.T, src string) []byte {
	t.Helper()
	glslc, err := exec.LookPath("glslc")
	if err != nil {
		t.Skip("no glslc")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "t.comp"), filepath.Join(dir, "t.spv")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(glslc, "--target-env=vulkan1.2", "-O", "-o", out, in).CombinedOutput(); err != nil {
		t.Fatalf("glslc: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDispatch runs a shader that reads and writes buffers through their
// addresses in the push constants, with a specialization constant, twice
// through one recorded command buffer (Replay) and once through Submit.
func TestDispatch(t *testing.T) {
	d := testDevice(t)
	code := compileGLSL(t, `#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const float SCALE = 1.0;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer F32s { float v[]; };
layout(push_constant, std430) uniform Push { F32s x; F32s y; uint n; float add; } p;
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i < p.n) p.y.v[i] = p.x.v[i] * SCALE + p.add + p.y.v[i];
}`)
	const n = 1000
	key, _ := newPipelineKey("test_axpy", []uint32{64, 0x40400000}) // 3.0f
	pl, err := d.makePipeline(key, code)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := d.NewBuffer(4 * n)
	y, err := d.NewHostBuffer(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	defer y.Free()
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i)
	}
	if err := d.Write(x, 0, F32Bytes(xs)); err != nil {
		t.Fatal(err)
	}
	if err := d.Fill(y, 0, 4*n, 0); err != nil {
		t.Fatal(err)
	}
	type push struct {
		x, y uint64
		n    uint32
		add  float32
	}
	pu := push{x.Addr(), y.Addr(), n, 0.5}
	r, err := d.Record()
	if err != nil {
		t.Fatal(err)
	}
	r.Dispatch(pl, (n+63)/64, 1, 1, PushBytes(&pu))
	if err := r.End(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := d.Replay(r); err != nil {
			t.Fatal(err)
		}
	}
	r.Release()
	s, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	s.Dispatch(pl, (n+63)/64, 1, 1, PushBytes(&pu))
	if err := d.Submit(s); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, n)
	copy(F32Bytes(got), y.Host())
	for i, g := range got {
		if want := 3 * (float32(i)*3 + 0.5); g != want {
			t.Fatalf("y[%d] = %g, want %g", i, g, want)
		}
	}
}

// benchWeights uploads rows random rows of cols values of typ (bytes
// masked with 0x3b: finite F16 scales, small values) for the product
// benchmarks, and returns the buffer, a row's bytes and the total.
func benchWeights(b *testing.B, d *Device, typ gguf.TensorType, rows, cols int) (w *Buffer, rowBytes, size int) {
	b.Helper()
	rb, _ := typ.RowBytes(uint64(cols))
	data := make([]byte, rows*int(rb))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32() & 0x3b)
	}
	w, err := d.NewBuffer(int64(len(data)))
	if err != nil {
		b.Fatal(err)
	}
	if err := d.Write(w, 0, data); err != nil {
		b.Fatal(err)
	}
	return w, int(rb), len(data)
}

// benchBatches runs the benchmark's loop: each iteration a command buffer
// of batch times what record records, submitted and waited for. It
// returns the iterations run.
func benchBatches(b *testing.B, d *Device, batch int, record func(r *Recorder)) int {
	b.Helper()
	n := 0
	for b.Loop() {
		r, err := d.Begin()
		if err != nil {
			b.Fatal(err)
		}
		for range batch {
			record(r)
		}
		if err := d.Submit(r); err != nil {
			b.Fatal(err)
		}
		n++
	}
	return n
}

// dispatchOnce records one dispatch of p with the push block push,
// submits it and waits.
func dispatchOnce(t testing.TB, d *Device, p *Pipeline, gx, gy, gz uint32, push []byte) {
	t.Helper()
	r, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	r.Dispatch(p, gx, gy, gz, push)
	if err := d.Submit(r); err != nil {
		t.Fatalf("%s: %v", p.Name, err)
	}
}

// TestLostDevice checks what a submission that does not finish in time
// leaves (its wait shortened to a nanosecond, for 64 passes of an add
// over 64 MiB): an error that says so, the same error from every later
// submission, and buffers, the recorder and the device that free and
// close without touching what the GPU may still be running (before, the
// fence was reset and the command buffer freed under the running work:
// lavapipe crashed).
func TestLostDevice(t *testing.T) {
	d := testDevice(t)
	const n = 16 << 20
	x, err := d.NewBuffer(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	y, err := d.NewBuffer(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := d.Pipeline("add", elementWG)
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	push := pushAdd{X: x.Addr(), Y: y.Addr(), N: n}
	gx, gy := groups2D(n, elementWG)
	for range 64 {
		r.Dispatch(pl, gx, gy, 1, PushBytes(&push))
		r.Barrier()
	}
	d.wait = 1
	lost := d.Submit(r)
	if !errors.Is(lost, vk.Timeout) || !strings.Contains(lost.Error(), "lost") {
		t.Fatalf("Submit of work that cannot finish in a nanosecond: %v, want a timeout that says the device is lost", lost)
	}
	if _, err := d.Begin(); err != lost {
		t.Errorf("a later Begin: %v, want %v", err, lost)
	}
	if err2 := d.Fill(y, 0, 4, 0); !errors.Is(err2, vk.Timeout) {
		t.Errorf("a later Fill: %v, want the lost device's error", err2)
	}
	x.Free()
	y.Free()
	if err := d.Close(); err != nil {
		t.Error(err)
	}
}
