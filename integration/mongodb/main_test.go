package mongodb_test

import (
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMain runs the tests from integration/ (integration/itest/main.go).
func TestMain(m *testing.M) { itest.Main(m) }
