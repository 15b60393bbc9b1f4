package pipelines

import (
	"testing"

	"github.com/tributary-cdc/tributary/pkg/config"
)

// TestEverySourceTypeValidates: the functions read documents of every
// source type built in (its rules are its driver's), mariadb included.
func TestEverySourceTypeValidates(t *testing.T) {
	for _, src := range []string{
		"{type: postgres, url: 'postgres://u@db/shop'}",
		"{type: mysql, url: 'mysql://u@db:3306/shop'}",
		"{type: mariadb, url: 'u@tcp(db:3306)/shop'}",
	} {
		if _, err := config.Parse([]byte("name: shop\nsource: " + src + "\ndestination: {bootstrap_servers: 'k:9092', topic_prefix: shop}\n")); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}
