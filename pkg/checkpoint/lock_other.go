//go:build !unix

package checkpoint

import (
	"errors"
	"os"
)

var errLocked = errors.New("locked")

// tryLock: the file store needs flock, which only Unix systems have.
func tryLock(*os.File) error {
	return errors.New("the file checkpoint store needs a Unix system (flock)")
}

func waitLock(f *os.File) error { return tryLock(f) }
