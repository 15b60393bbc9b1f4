//go:build !linux

package main

import "os"

// isTerminal says whether f is a character device (a terminal, or
// /dev/null: without the ioctl of tty_linux.go the two look alike).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
