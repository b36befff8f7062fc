//go:build !darwin

package pool

// perfCores returns 0: the OS does not tell performance cores apart.
func perfCores() int { return 0 }
