package main

import (
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// newBar returns the progress bar on standard error that pull, convert,
// quantize and synth show: desc, then bytes done of total and the time
// left; it clears itself when finished.
func newBar(desc string, total int64) *progressbar.ProgressBar {
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowTotalBytes(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// workBar is the progress bar of a command that writes a file (convert,
// quantize, synth): made at the first report, on a terminal only.
type workBar struct {
	desc string
	bar  *progressbar.ProgressBar
}

// progress returns the callback that reports done of total bytes, or nil
// when standard error is no terminal (no bar).
func (b *workBar) progress() func(done, total int64) {
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		return nil
	}
	return func(done, total int64) {
		if b.bar == nil {
			b.bar = newBar(b.desc, total)
		}
		b.bar.Set64(done)
	}
}

// end finishes the bar (clearing it) after the work returned err, or
// leaves it where it stopped when err is not nil.
func (b *workBar) end(err error) {
	switch {
	case b.bar == nil:
	case err == nil:
		b.bar.Finish()
	default:
		b.bar.Exit()
	}
}
