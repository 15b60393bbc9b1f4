package debezium

import (
	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source/mysql"
	"github.com/tributary-cdc/tributary/pkg/source/postgres"
)

// The source blocks the drivers declare: the encoder's tests write them,
// so that the golden messages check the drivers' declarations too.
var blocks = map[string]*change.SourceBlock{
	"postgresql": postgres.SourceBlock,
	"mysql":      mysql.MySQLSourceBlock,
	"mariadb":    mysql.MariaDBSourceBlock,
}

// with sets the values of s.Block's own fields by name: name, value
// pairs, each value a string or an integer. A name that is no slot field
// of the block is a fault of the test.
func with(s change.Source, kv ...any) change.Source {
	for i := 0; i < len(kv); i += 2 {
		name := kv[i].(string)
		slot := s.Block.Slot(name)
		if slot < 0 {
			panic("source block " + s.Block.Connector + " has no slot field " + name)
		}
		switch v := kv[i+1].(type) {
		case string:
			s.Strings[slot] = v
		case int:
			s.Ints[slot] = int64(v)
		case int32:
			s.Ints[slot] = int64(v)
		case int64:
			s.Ints[slot] = v
		default:
			panic("source field " + name + ": not a string or an integer")
		}
	}
	return s
}
