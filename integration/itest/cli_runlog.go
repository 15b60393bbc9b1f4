package itest

import (
	"encoding/json"
	"strings"
)

// LogLines decodes the JSON log lines of out whose msg is msg.
func LogLines(out, msg string) []map[string]any {
	var found []map[string]any
	for _, line := range strings.Split(out, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			found = append(found, m)
		}
	}
	return found
}
