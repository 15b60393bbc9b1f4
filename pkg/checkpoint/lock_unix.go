//go:build unix

package checkpoint

import (
	"errors"
	"os"
	"syscall"
)

var errLocked = errors.New("locked")

// tryLock takes an exclusive flock without waiting. flock belongs to the
// open file description, so a second open of the same file in this very
// process conflicts too.
func tryLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLocked
		default:
			return err
		}
	}
}

// waitLock takes an exclusive flock, waiting for it: for the short
// read-modify-write of a backfill request file.
func waitLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
