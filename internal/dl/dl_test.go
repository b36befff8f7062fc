package dl

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// system names the C library of this OS and three functions in it: the
// process id, the length of a NUL-terminated string, and the absolute
// value of an int.
func system(t *testing.T) (lib, getpid, strlen string) {
	switch runtime.GOOS {
	case "linux":
		return "libc.so.6", "getpid", "strlen"
	case "darwin":
		return "/usr/lib/libSystem.B.dylib", "getpid", "strlen"
	case "windows":
		return "kernel32.dll", "GetCurrentProcessId", "lstrlenA"
	}
	t.Skipf("no C library known on %s", runtime.GOOS)
	return "", "", ""
}

func TestCallC(t *testing.T) {
	name, getpid, strlen := system(t)
	// The missing name first: Open goes on to the next.
	lib, err := Open("libinferno-missing.so.0", name)
	if err != nil {
		t.Fatal(err)
	}
	if lib.Name != name {
		t.Errorf("loaded %q, want %q", lib.Name, name)
	}
	fn, err := lib.Sym(getpid)
	if err != nil {
		t.Fatal(err)
	}
	if got := int(uint32(Call(fn))); got != os.Getpid() {
		t.Errorf("%s() = %d, os.Getpid() = %d", getpid, got, os.Getpid())
	}
	fn, err = lib.Sym(strlen)
	if err != nil {
		t.Fatal(err)
	}
	s := []byte("inferno\x00")
	if got := Call(fn, uintptr(unsafe.Pointer(&s[0]))); got != 7 {
		t.Errorf("%s(\"inferno\") = %d, want 7", strlen, got)
	}
}

func TestOpenMissing(t *testing.T) {
	names := []string{"libinferno-missing.so.0", "inferno-missing-2.dll"}
	_, err := Open(names...)
	if err == nil {
		t.Fatal("Open of missing libraries succeeded")
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	if !strings.HasPrefix(msg, "dl: cannot load "+names[0]+" (") {
		t.Errorf("error does not begin with the first name and its reason: %s", msg)
	}
	if !strings.Contains(msg, ") or "+names[1]+" (") || !strings.HasSuffix(msg, ")") {
		t.Errorf("error does not go on with the second name and its reason: %s", msg)
	}
	if _, err := Open(); err == nil {
		t.Error("Open with no names succeeded")
	}
}

func TestSymMissing(t *testing.T) {
	name, _, _ := system(t)
	lib, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	const missing = "inferno_no_such_function"
	p, err := lib.Sym(missing)
	if err == nil {
		t.Fatalf("Sym(%s) = %#x, want an error", missing, p)
	}
	if msg := err.Error(); !strings.Contains(msg, missing) || !strings.Contains(msg, name) || strings.ContainsAny(msg, "\r\n") {
		t.Errorf("error does not name the symbol and library on one line: %q", msg)
	}
}
