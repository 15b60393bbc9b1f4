package itest

import (
	"strings"
)

func SQLText(s *string) string {
	if s == nil {
		return "NULL"
	}
	return "'" + strings.ReplaceAll(*s, "'", "''") + "'"
}
