package avro_test

import (
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMain builds the binary under test once and stops the services the
// tests started (integration/itest/main.go).
func TestMain(m *testing.M) { itest.Main(m) }
