package itest

// AfterColumns is the column schemas of a value message's "after" struct.
func AfterColumns(value map[string]any) []map[string]any {
	schema, _ := value["schema"].(map[string]any)
	fields, _ := schema["fields"].([]any)
	for _, f := range fields {
		fm, _ := f.(map[string]any)
		if fm["field"] != "after" {
			continue
		}
		inner, _ := fm["fields"].([]any)
		cols := make([]map[string]any, 0, len(inner))
		for _, c := range inner {
			cm, _ := c.(map[string]any)
			cols = append(cols, cm)
		}
		return cols
	}
	return nil
}

// AfterColumn is column col's schema in a value message's "after" struct,
// or nil.
func AfterColumn(value map[string]any, col string) map[string]any {
	for _, c := range AfterColumns(value) {
		if c["field"] == col {
			return c
		}
	}
	return nil
}

// AfterFieldType is the Connect type of column col in a value message's
// "after" schema; "" when it has none.
func AfterFieldType(v map[string]any, col string) string {
	typ, _ := AfterColumn(v, col)["type"].(string)
	return typ
}

// KeyOf is the integer k of a message's key.
func KeyOf(m Message) int64 {
	k, _ := m.Key["payload"].(map[string]any)["k"].(float64)
	return int64(k)
}
