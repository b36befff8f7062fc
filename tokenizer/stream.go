package tokenizer

// A StreamDecoder decodes token ids one at a time, as a model generates
// them, holding back bytes of a UTF-8 encoded character until it is
// complete. The concatenation of everything Next and Flush return equals
// Decode of all the ids given to Next.
//
// A StreamDecoder must not be used by multiple goroutines at once.
type StreamDecoder struct {
	t   *Tokenizer
	buf []byte // pending bytes: a valid but incomplete UTF-8 sequence
	out []byte
}

// NewStreamDecoder returns a StreamDecoder for t.
func (t *Tokenizer) NewStreamDecoder() *StreamDecoder {
	return &StreamDecoder{t: t}
}

// Next adds token id and returns the text that became complete with it.
// If the token ends inside a multi-byte UTF-8 character, the bytes of that
// character are held back and returned by a later call once the character
// is complete. Bytes that cannot become valid UTF-8 are returned as U+FFFD.
func (d *StreamDecoder) Next(id int32) string {
	p := d.t.piece(id)
	if len(p) == 0 {
		return ""
	}
	var b []byte
	if len(d.buf) == 0 {
		b = p
	} else {
		d.buf = append(d.buf, p...)
		b = d.buf
	}
	var n int
	d.out, n = appendLossy(d.out[:0], b, false)
	d.buf = append(d.buf[:0], b[n:]...)
	return string(d.out)
}

// Flush returns the bytes still held back, with each ill-formed
// subsequence replaced by U+FFFD, and resets the decoder.
func (d *StreamDecoder) Flush() string {
	s := lossyString(d.buf)
	d.buf = d.buf[:0]
	return s
}

// Reset discards any held-back bytes.
func (d *StreamDecoder) Reset() { d.buf = d.buf[:0] }
