package pipeline

import (
	"errors"

	"github.com/tributary-cdc/tributary/pkg/debezium"
)

// unencodable says why a row whose encoding failed with err is recorded
// as row.skipped rather than stop the pipeline ("" when err is nil or
// stops it): a value the configured format cannot represent, which would
// fail again at every restart. NaN and ±Infinity in a NOT NULL PostgreSQL
// numeric (or in an element of a numeric[]) are the case: a Connect
// Decimal has no such values, and the column no null to stand for them
// (a nullable column gets null, as Debezium writes). The reason names
// the column, never the value, and the setting that publishes it.
func unencodable(err error) string {
	if err == nil || !errors.Is(err, debezium.ErrSpecialDecimal) {
		return ""
	}
	return err.Error() + "; format.decimal_handling string or double publishes NaN and ±Infinity (docs/types.md)"
}
