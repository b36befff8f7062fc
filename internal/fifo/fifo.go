// Package fifo makes named pipes for the tests that check that a special
// file given as an output is refused rather than replaced.
package fifo
