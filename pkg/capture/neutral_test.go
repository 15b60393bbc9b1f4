package capture

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// neutral are the packages that know no database: what a driver needs
// of them is declared by the driver (its source block, what its types
// write), so that adding a source touches none of them. pkg/source is the
// drivers' kit, its own files only.
var neutral = []string{"pkg/change", "pkg/debezium", "pkg/jsonstr", "pkg/snapshot", "pkg/source", "pkg/kafka", "pkg/checkpoint", "pkg/destination", "pkg/webhook"}

// databaseWords and databaseNames name a database or a piece of one
// database's log. An identifier is split into its words (camelCase and
// snake_case): a word equal to a databaseWord is a leak ("originLSN",
// "pgObject"), and so is an identifier that contains a databaseName
// anywhere ("MySQLSourceBlock", "appendBinlogFields"), while "Pos",
// "IsNull" and "wallTime" are not.
var (
	databaseWords = []string{"pg", "pgoutput", "wal", "lsn", "xid", "xmin", "toast", "hstore", "postgis", "gtid", "oplog", "scn"}
	databaseNames = []string{"postgres", "mysql", "mariadb", "binlog", "mongo", "sqlserver", "mssql", "oracle"}
)

// driverModules are the database client libraries: a neutral package
// that imports one speaks that database's protocol.
var driverModules = []string{"github.com/jackc/", "github.com/go-mysql-org/", "github.com/go-sql-driver/", "github.com/lib/pq", "go.mongodb.org/", "github.com/microsoft/go-mssqldb"}

// neutralAllowed lists the words a neutral package may still use, each
// with why; keep it short. Comments are not checked: they may name the
// database whose behaviour Debezium's code shows, as documentation.
var neutralAllowed = map[string]string{}

// identWords splits an identifier into its lower-cased words:
// "appendBinlogFields" → append, binlog, fields; "SRID" → srid;
// "origin_lsn" → origin, lsn.
func identWords(id string) []string {
	var words []string
	rs := []rune(id)
	start := 0
	flush := func(end int) {
		if end > start {
			words = append(words, strings.ToLower(string(rs[start:end])))
		}
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '_' || unicode.IsDigit(r):
			flush(i)
			start = i + 1
		case unicode.IsUpper(r) && i > start:
			prevLower := unicode.IsLower(rs[i-1])
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || (unicode.IsUpper(rs[i-1]) && nextLower) {
				flush(i)
				start = i
			}
		}
	}
	flush(len(rs))
	return words
}

// leakyWord returns the database word or name id is made of, or "".
func leakyWord(id string) string {
	lower := strings.ToLower(id)
	for _, n := range databaseNames {
		if strings.Contains(lower, n) && !allowed(n) {
			return n
		}
	}
	for _, w := range identWords(id) {
		if slices.Contains(databaseWords, w) && !allowed(w) {
			return w
		}
	}
	return ""
}

func allowed(word string) bool {
	_, ok := neutralAllowed[word]
	return ok
}

// neutralLeaks reports, for the non-test Go files of dir (a path below
// the repository's root), every import of a driver package or a database
// client, every identifier made of a database word and every string
// constant naming a database.
func neutralLeaks(t *testing.T, dir string) []string {
	t.Helper()
	root := filepath.Join("..", "..")
	drivers, err := os.ReadDir(filepath.Join(root, "pkg", "source"))
	if err != nil {
		t.Fatal(err)
	}
	var driverPkgs []string
	for _, d := range drivers {
		if d.IsDir() {
			driverPkgs = append(driverPkgs, module+"pkg/source/"+d.Name())
		}
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var leaks []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		at := func(n ast.Node) string {
			p := fset.Position(n.Pos())
			return filepath.Join(dir, filepath.Base(p.Filename)) + ":" + strconv.Itoa(p.Line)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if slices.ContainsFunc(driverPkgs, func(d string) bool { return path == d || strings.HasPrefix(path, d+"/") }) ||
				slices.ContainsFunc(driverModules, func(m string) bool { return strings.HasPrefix(path, m) }) {
				leaks = append(leaks, at(imp)+": imports "+path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ImportSpec:
				return false // checked above
			case *ast.Ident:
				if w := leakyWord(n.Name); w != "" {
					leaks = append(leaks, at(n)+": identifier "+n.Name+" names a database ("+w+")")
				}
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					break
				}
				s, err := strconv.Unquote(n.Value)
				if err != nil {
					s = n.Value
				}
				for _, d := range databaseNames {
					if strings.Contains(strings.ToLower(s), d) && !allowed(d) {
						leaks = append(leaks, at(n)+": string "+strconv.Quote(s)+" names a database ("+d+")")
						break
					}
				}
			}
			return true
		})
	}
	return leaks
}

// TestNeutralPackages: the neutral packages import no driver and no
// database client, and neither their identifiers nor their strings name
// a database: what is one database's belongs to its driver
// (docs/architecture.md, Adding a source).
func TestNeutralPackages(t *testing.T) {
	for _, dir := range neutral {
		for _, leak := range neutralLeaks(t, dir) {
			t.Error(leak)
		}
	}
}

// TestNeutralLeaksFound: the check finds what it is for, and passes over
// what only looks like it.
func TestNeutralLeaksFound(t *testing.T) {
	for id, want := range map[string]string{
		"appendBinlogFields": "binlog", "connectorPostgres": "postgres", "MySQLSourceBlock": "mysql",
		"pgObject": "pg", "originLSN": "lsn", "GTIDSet": "gtid", "mariadbFlavor": "mariadb",
		"Pos": "", "IsNull": "", "appendString": "", "Wkb": "", "Page": "", "walk": "", "wallTime": "", "pgx": "",
	} {
		if got := leakyWord(id); got != "" && want == "" || got == "" && want != "" {
			t.Errorf("leakyWord(%q) = %q, want a leak %v", id, got, want != "")
		}
	}
}
