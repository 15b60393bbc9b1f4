package itest

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// held counts, per lock name, the running tests of this process that
// hold it (a subtest of a holder takes it again).
var held = struct {
	sync.Mutex
	files map[string]*os.File
	count map[string]int
}{files: map[string]*os.File{}, count: map[string]int{}}

// Exclusive holds the machine-wide lock name (a file in .services/) until
// t ends. go test runs the integration packages at the same time (see
// docs/testing.md); what their tests cannot share takes turns by it: the
// private servers of integration/services/faults.sh, which the tests
// restart, kill, purge and cut off.
func Exclusive(t *testing.T, name string) {
	t.Helper()
	held.Lock()
	defer held.Unlock()
	if held.count[name] == 0 {
		path := filepath.Join("..", ".services", "it-"+name+".lock")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			t.Fatalf("lock %s: %v", path, err)
		}
		if waited := time.Since(began); waited > time.Second {
			t.Logf("waited %s for %s (another test package used the servers)", waited.Round(time.Second), path)
		}
		held.files[name] = f
	}
	held.count[name]++
	t.Cleanup(func() {
		held.Lock()
		defer held.Unlock()
		held.count[name]--
		if held.count[name] == 0 {
			held.files[name].Close() // releases the lock
			delete(held.files, name)
		}
	})
}
