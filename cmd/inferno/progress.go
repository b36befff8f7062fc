package main

import (
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
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
