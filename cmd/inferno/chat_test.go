package main

import (
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestChat runs a conversation through "inferno chat" on standard input:
// two turns, a reset, a message too long for the context, and /exit.
func TestChat(t *testing.T) {
	t.Parallel()
	in := "Hello there\nHow are you?\n/reset\n" + strings.Repeat("word ", 80) + "\nShort again\n/exit\nnever read\n"
	out, errOut, code := run(t, in, "chat", goldenModel, "--backend", "simd", "--ctx", "64", "-n", "6", "--seed", "3", "--system", "Be brief.")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"(new conversation)", "(the conversation would take", "the context holds 64: /reset to start a new one)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Each reply stops at -n 6 tokens (the random model does not end its turns).
	if n := strings.Count(out, "(the reply reached -n 6 tokens)") + strings.Count(out, "filled the context"); n != 3 {
		t.Errorf("%d replies, want 3:\n%s", n, out)
	}
	// The same conversation with the same seed gives the same replies.
	again, _, _ := run(t, in, "chat", goldenModel, "--backend", "simd", "--ctx", "64", "-n", "6", "--seed", "3", "--system", "Be brief.")
	if again != out {
		t.Errorf("same seed, different transcript:\n%s\n---\n%s", out, again)
	}
}

// TestChatContextFull: a reply that fills the context says so and the
// conversation goes on.
func TestChatContextFull(t *testing.T) {
	t.Parallel()
	out, errOut, code := run(t, "Hi\nMore\n", "chat", goldenModel, "--backend", "simd", "--ctx", "24", "-n", "100", "--no-think", "--ignore-eos")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "(the reply filled the context of 24 tokens: /reset to start a new conversation)") {
		t.Errorf("no context-full notice:\n%s", out)
	}
	if !strings.Contains(out, "(the conversation would take") {
		t.Errorf("the second turn should not fit:\n%s", out)
	}
}

func TestGenerateSampling(t *testing.T) {
	t.Parallel()
	args := []string{"generate", goldenModel, "Once upon a time", "-n", "10", "--backend", "simd", "--temperature", "0.9", "--top-p", "0.95", "--ignore-eos"}
	a, errOut, code := run(t, "", append(args, "--seed", "7")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, _, _ := run(t, "", append(args, "--seed", "7")...)
	c, _, _ := run(t, "", append(args, "--seed", "8")...)
	if a != b {
		t.Errorf("seed 7 twice: %q and %q", a, b)
	}
	if a == c {
		t.Errorf("seeds 7 and 8 both: %q", a)
	}
	// top-k 1 is greedy.
	g, _, _ := run(t, "", "generate", goldenModel, "Once upon a time", "-n", "10", "--backend", "simd", "--ignore-eos")
	k1, _, _ := run(t, "", "generate", goldenModel, "Once upon a time", "-n", "10", "--backend", "simd", "--ignore-eos", "--temperature", "1", "--top-k", "1", "--seed", "1")
	if g != k1 {
		t.Errorf("top-k 1 %q, greedy %q", k1, g)
	}
	// A stop string cuts the output before it.
	if len(g) > 6 {
		stop := strings.TrimSpace(g)[3:6]
		s, _, _ := run(t, "", "generate", goldenModel, "Once upon a time", "-n", "10", "--backend", "simd", "--ignore-eos", "--stop", stop)
		if strings.Contains(s, stop) || !strings.HasPrefix(g, strings.TrimSuffix(s, "\n")) {
			t.Errorf("--stop %q: %q (greedy %q)", stop, s, g)
		}
	}
	// --chat renders the template: the prompt grows by the turn markers.
	_, errOut, code = run(t, "", "generate", goldenModel, "Hi", "-n", "2", "--backend", "simd", "--chat", "--no-think")
	if code != 0 {
		t.Fatalf("--chat: exit %d: %s", code, errOut)
	}
	for _, bad := range [][]string{
		{"--temperature", "3"}, {"--top-p", "0"}, {"--stop", "a", "--stop", "b", "--stop", "c", "--stop", "d", "--stop", "e"},
	} {
		_, errOut, code := run(t, "", append([]string{"generate", goldenModel, "Hi"}, bad...)...)
		if code != 1 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", bad, code, errOut)
		}
	}
}

// TestChatInterrupt: Ctrl-C stops the reply being written, the
// conversation goes on, and /exit quits with status 0.
func TestChatInterrupt(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(inferno, "chat", goldenModel, "--backend", "simd", "-n", "1000000", "--ignore-eos", "--ctx", "40000")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	io.WriteString(stdin, "Tell me everything.\n")
	deadline := time.Now().Add(10 * time.Second)
	for len(out.String()) < 200 {
		if time.Now().After(deadline) {
			t.Fatalf("no reply after 10 s: %q", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	for !strings.Contains(out.String(), "(stopped)") {
		if time.Now().After(deadline) {
			t.Fatalf("the reply did not stop: ...%q", tail(out.String()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	io.WriteString(stdin, "/exit\n")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v: ...%q", err, tail(out.String()))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("chat did not exit after /exit")
	}
}

func tail(s string) string { return s[max(0, len(s)-300):] }
