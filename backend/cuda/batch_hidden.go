package cuda

import (
	"errors"
	"fmt"

	"inferno/backend/scalar"
)

// hiddenRows holds the final hidden states of the Hidden tokens of the
// last Forward (an embedding model's last prompt tokens): general gathers
// their residual rows into pxo after the output head, readHidden copies
// them to the host and applies the final norm there (a few rows of Hidden
// values: no kernel of its own, and the head is skipped for them).
type hiddenRows struct {
	n    int       // rows of the last Forward
	rows []float32 // n x Hidden
}

// readHidden downloads the n gathered rows and applies the output norm to
// each on the host.
func (br *BatchRunner) readHidden(n int) error {
	if n == 0 {
		return nil
	}
	h := br.cfg.Hidden
	if cap(br.hid.rows) < n*h {
		br.hid.rows = make([]float32, n*h)
	}
	rows := br.hid.rows[:n*h]
	if err := br.dev.download(f32Bytes(rows), br.pxo); err != nil {
		return fmt.Errorf("cuda: reading the hidden rows: %w", err)
	}
	// The CPU backend's own final norm, so an embedding's last step is the
	// same arithmetic on both backends.
	scalar.NewScalar().RMSNorm(rows, rows, br.base.m.Tensors().OutputNorm, br.cfg.Eps)
	br.hid.n = n
	return nil
}

// Hidden returns hidden row i of the last Forward: the final normed state
// of its batch's token Hidden[i] (engine.Embedder).
func (br *BatchRunner) Hidden(i int) ([]float32, error) {
	if br.closed {
		return nil, errors.New("cuda: batch runner is closed")
	}
	if !br.valid || i < 0 || i >= br.hid.n {
		return nil, fmt.Errorf("cuda: no hidden row %d (the last forward pass has %d)", i, br.hid.n)
	}
	h := br.cfg.Hidden
	return br.hid.rows[i*h : (i+1)*h], nil
}
