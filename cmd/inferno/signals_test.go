package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalCleanup stops synth with SIGTERM and with SIGINT while it
// writes: it exits with 128 + the signal's number and leaves no temporary
// file behind (convert and quantize stop through the same signalContext).
func TestSignalCleanup(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(inferno, "synth", filepath.Join(dir, "out.gguf"), "--preset", "0.6b", "--type", "q8_0")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(20 * time.Second)
			for {
				tmps, _ := filepath.Glob(filepath.Join(dir, ".out.gguf.*.tmp"))
				if len(tmps) > 0 {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("no temporary file appeared: %s", stderr.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 128+int(sig) {
				t.Fatalf("exit %v, want status %d: %s", err, 128+int(sig), stderr.String())
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
			if want := map[syscall.Signal]string{syscall.SIGTERM: "interrupted (SIGTERM)", syscall.SIGINT: "interrupted (SIGINT)"}[sig]; !strings.Contains(stderr.String(), want) {
				t.Errorf("standard error %q does not say %q", stderr.String(), want)
			}
		})
	}
}

// TestStaleTempRemoved: the temporary file of a writer killed outright
// (SIGKILL leaves no chance to clean up) is removed by the next write to
// its folder.
func TestStaleTempRemoved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(inferno, "synth", filepath.Join(dir, "big.gguf"), "--preset", "0.6b", "--type", "q8_0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pattern := filepath.Join(dir, fmt.Sprintf(".big.gguf.%d-*.tmp", cmd.Process.Pid))
	deadline := time.Now().Add(20 * time.Second)
	for {
		if tmps, _ := filepath.Glob(pattern); len(tmps) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("no temporary file appeared")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if tmps, _ := filepath.Glob(pattern); len(tmps) != 1 {
		t.Fatalf("after SIGKILL: %v, want the temporary file left", tmps)
	}
	if _, errOut, code := run(t, "", "synth", filepath.Join(dir, "small.gguf"), "--preset", "tiny"); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, errOut)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 1 || left[0].Name() != "small.gguf" {
		t.Errorf("folder holds %v, want small.gguf alone", left)
	}
}
