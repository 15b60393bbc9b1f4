package itest

import (
	"encoding/json"
	"strings"
)

// LineWith returns the last line of out that contains s.
func LineWith(out, s string) string {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], s) {
			return lines[i]
		}
	}
	return ""
}

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

// Tail is the last n bytes of s, marked "…" when cut.
func Tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// OutTail is the end of a process's output, for failure messages.
func OutTail(s string) string { return Tail(s, 4000) }

// Indent puts prefix before every line of s.
func Indent(s, prefix string) string {
	lines := strings.SplitAfter(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "") + "\n"
}
