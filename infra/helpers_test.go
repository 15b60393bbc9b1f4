package main

import (
	"encoding/json"
	"strings"
)

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

func containsString(s, sub string) bool { return strings.Contains(s, sub) }
