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
	drivers := []string{"pkg/source/postgres", "pkg/source/mysql"}
	for _, d := range drivers {
		if !slices.Contains(imports(t, "pkg/capture"), d) {
			t.Errorf("pkg/capture does not run the driver %s", d)
		}
	}
	above := map[string][]string{
		// package: what it must not import
		"pkg/snapshot":        {"pkg/source", "pkg/capture", "pkg/pipeline", drivers[0], drivers[1]},
		"pkg/change":          {"pkg/source", "pkg/capture", "pkg/snapshot", "pkg/pipeline"},
		"pkg/source":          {"pkg/capture", "pkg/pipeline", drivers[0], drivers[1]},
		"pkg/source/postgres": {"pkg/capture", "pkg/pipeline", "pkg/debezium", "pkg/kafka", drivers[1]},
		"pkg/source/mysql":    {"pkg/capture", "pkg/pipeline", "pkg/debezium", "pkg/kafka", drivers[0]},
		"pkg/capture":         {"pkg/pipeline", "pkg/kafka", "pkg/debezium"},
		"pkg/pipeline":        drivers,
		// The configuration and the status report know a database only
		// through the hooks of its Kind (drivers.go registers them).
		"pkg/config": {"pkg/source", "pkg/capture", drivers[0], drivers[1]},
		"pkg/status": {"pkg/capture", drivers[0], drivers[1]},
	}
	for pkg, banned := range above {
		for _, imp := range imports(t, pkg) {
			if slices.Contains(banned, imp) {
				t.Errorf("%s imports %s: an arrow back up (docs/architecture.md, Packages)", pkg, imp)
			}
		}
	}
}
