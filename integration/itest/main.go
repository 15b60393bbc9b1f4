package itest

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Main is the TestMain of every integration test package: it builds the
// binary under test once, runs the tests from integration/ (the scripts of
// integration/services and the state in .services are named relative to
// it, whichever package directory go test started in), and stops the
// services the tests started.
func Main(m *testing.M) {
	flag.Parse()
	if err := chdirIntegration(); err != nil {
		fmt.Fprintf(os.Stderr, "integration tests: %v\n", err)
		os.Exit(1)
	}
	if testing.Short() {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "tributary-it-")
	if err != nil {
		panic(err)
	}
	Binary = filepath.Join(dir, "tributary")
	out, err := exec.Command("go", "build", "-o", Binary, "../cmd/tributary").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build tributary: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	stopStartedServices()
	os.RemoveAll(dir)
	os.Exit(code)
}

// chdirIntegration makes integration/ of the module the working directory.
func chdirIntegration() error {
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return os.Chdir(filepath.Join(d, "integration"))
		}
		if filepath.Dir(d) == d {
			return fmt.Errorf("no go.mod above %s", dir)
		}
	}
}

// SkipShort skips t under go test -short (no services).
func SkipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs the services of `make services-up`")
	}
}

// serviceScripts are the on-demand service scripts (integration/services/)
// this test binary started; TestMain stops each with `<script> down` once
// every test ran, so the suite leaves nothing running that it started.
type serviceScripts struct {
	mu      sync.Mutex
	scripts []string
}

var StartedServices serviceScripts

func (s *serviceScripts) Add(script string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, have := range s.scripts {
		if have == script {
			return
		}
	}
	s.scripts = append(s.scripts, script)
}

func stopStartedServices() {
	StartedServices.mu.Lock()
	defer StartedServices.mu.Unlock()
	for _, script := range StartedServices.scripts {
		if out, err := exec.Command("services/"+script, "down").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "integration/services/%s down: %v\n%s", script, err, out)
		}
	}
}

// ReviewHeld skips a review check that held unless TRIBUTARY_REVIEW_HELD
// is set: they repeat scenarios the suite covers in other forms, and
// make test is near its time budget.
func ReviewHeld(t *testing.T) {
	t.Helper()
	if os.Getenv("TRIBUTARY_REVIEW_HELD") == "" {
		t.Skip("a review check that held; set TRIBUTARY_REVIEW_HELD=1 to run it")
	}
}
