package itest

// UnknownTypesTable has columns of types Tributary cannot encode: tsquery
// (Debezium drops it too) and box (one Debezium maps to a Geometry that
// Tributary does not build yet).
const UnknownTypesTable = `CREATE TABLE odd (id integer PRIMARY KEY, q tsquery, b box, note text)`

// AfterFieldType is the Connect type of column col in a value message's
// "after" schema; "" when it has none.
func AfterFieldType(v map[string]any, col string) string {
	typ, _ := AfterColumn(v, col)["type"].(string)
	return typ
}
