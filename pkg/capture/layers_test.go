package capture

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/tributary-cdc/tributary/"

// imports lists the repository packages pkg (a path below the module)
// imports, test files aside.
func imports(t *testing.T, pkg string) []string {
	t.Helper()
	p, err := build.Default.ImportDir(filepath.Join("..", "..", pkg), 0)
	if err != nil {
		t.Fatalf("%s: %v", pkg, err)
	}
	var out []string
	for _, imp := range p.Imports {
		if rest, ok := strings.CutPrefix(imp, module); ok {
			out = append(out, rest)
		}
	}
	return out
}

// The layers as docs/architecture.md draws them: the pipeline runs the
// capture loop, the loop runs the drivers, the drivers use the snapshot
// engine and the event model, and no arrow points back up. A driver that
// imported pkg/capture, or pkg/snapshot that imported a source, would
// make a database depend on the loop that runs it.
func TestLayers(t *testing.T) {
	// The drivers are the packages under pkg/source that pkg/capture
	// registers (drivers.go).
	var drivers []string
	for _, imp := range imports(t, "pkg/capture") {
		if strings.HasPrefix(imp, "pkg/source/") {
			drivers = append(drivers, imp)
		}
	}
	for _, d := range []string{"pkg/source/postgres", "pkg/source/mysql"} {
		if !slices.Contains(drivers, d) {
			t.Errorf("pkg/capture does not run the driver %s", d)
		}
	}
	with := func(pkgs ...string) []string { return append(pkgs, drivers...) }
	above := map[string][]string{
		// package: what it must not import
		"pkg/snapshot": with("pkg/source", "pkg/capture", "pkg/pipeline"),
		"pkg/change":   {"pkg/source", "pkg/capture", "pkg/snapshot", "pkg/pipeline"},
		"pkg/source":   with("pkg/capture", "pkg/pipeline"),
		"pkg/capture":  {"pkg/pipeline", "pkg/kafka", "pkg/debezium"},
		"pkg/pipeline": drivers,
		// The configuration and the status report know a database only
		// through the hooks of its Kind (drivers.go registers them).
		"pkg/config": with("pkg/source", "pkg/capture"),
		"pkg/status": with("pkg/capture"),
	}
	for _, d := range drivers {
		// A driver imports no other driver, and nothing above it.
		above[d] = append(slices.DeleteFunc(slices.Clone(drivers), func(o string) bool { return o == d }),
			"pkg/capture", "pkg/pipeline", "pkg/debezium", "pkg/kafka")
	}
	// The JSON string writer, shared by the encoder and a driver's own
	// message, stands below both: it imports nothing of the repository.
	if imps := imports(t, "pkg/jsonstr"); len(imps) > 0 {
		t.Errorf("pkg/jsonstr imports %v: the string writer must stand below the encoder and the drivers", imps)
	}
	for pkg, banned := range above {
		for _, imp := range imports(t, pkg) {
			if slices.Contains(banned, imp) {
				t.Errorf("%s imports %s: an arrow back up (docs/architecture.md, Packages)", pkg, imp)
			}
		}
	}
}
