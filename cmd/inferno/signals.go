package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// errInterrupted ends a command stopped by Ctrl-C (exit status 130, as a
// shell reports a program killed by SIGINT).
var errInterrupted = errors.New("interrupted")

// stopSignals are the signals on which commands stop cleanly, removing
// what they were writing: Ctrl-C's SIGINT, and SIGTERM, which kill,
// systemd, container runtimes and CI send.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// signalError ends a command that a signal stopped. It is errInterrupted,
// and the process exits with status 128 + the signal's number, as a shell
// reports a program the signal killed.
type signalError struct{ sig os.Signal }

func (e *signalError) Error() string {
	switch e.sig {
	case os.Interrupt:
		return "interrupted (SIGINT)"
	case syscall.SIGTERM:
		return "interrupted (SIGTERM)"
	}
	return "interrupted by " + e.sig.String()
}

func (e *signalError) Is(target error) bool { return target == errInterrupted }

// exitCode is the process's exit status for e.
func (e *signalError) exitCode() int {
	if s, ok := e.sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// signalContext returns a context that the first of stopSignals cancels,
// with a *signalError as its cause. stop stops catching the signals: a
// second one then has its default effect and ends the process at once.
func signalContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(&signalError{sig: s})
		case <-done:
		}
	}()
	stopped := false
	return ctx, func() {
		if !stopped {
			stopped = true
			signal.Stop(ch)
			close(done)
		}
	}
}

// signalled returns the error that ends a command whose ctx, from
// signalContext, a signal cancelled.
func signalled(ctx context.Context) error {
	var se *signalError
	if errors.As(context.Cause(ctx), &se) {
		return se
	}
	return errInterrupted
}
