package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLINeverSwitchesOnTheStore: the CLI reads checkpoint.store in one
// place (checkpointStore, which looks the kind up in pkg/checkpoint's
// registry) and never asks which concrete store it holds, so that a new
// kind of store needs no change here.
func TestCLINeverSwitchesOnTheStore(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if fn, ok := n.(*ast.FuncDecl); ok && fn.Name.Name == "checkpointStore" {
				return false // the one lookup
			}
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.SelectorExpr); ok && x.Sel.Name == "Checkpoint" && n.Sel.Name == "Store" {
					t.Errorf("%s: reads checkpoint.store outside checkpointStore", fset.Position(n.Pos()))
				}
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "checkpoint" && (n.Sel.Name == "DynamoDB" || n.Sel.Name == "File") {
					t.Errorf("%s: names the concrete store checkpoint.%s", fset.Position(n.Pos()), n.Sel.Name)
				}
			}
			return true
		})
	}
}
