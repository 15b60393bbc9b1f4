package itest

import (
	"encoding/json"
)

func JSONString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
