package config_test

// The rules of each source type are the drivers' (config.SourceKind),
// registered by pkg/capture: the tests of this package read documents
// with every type built in, as the commands do.
import _ "github.com/tributary-cdc/tributary/pkg/capture"
