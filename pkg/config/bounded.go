package config

import (
	"regexp"
	"strings"
)

// bounded is a pattern with a length bound: re (with + where the bound
// applies) matches, and the bounded part (all of the string, or what
// part returns) is lo to hi bytes long. Go compiles x{1,1000} into a
// thousand copies of x, which every process then holds for good (about
// 1.5 MB of heap for this package's few); a + and a length check cost
// nothing and accept the same strings.
type bounded struct {
	re     *regexp.Regexp
	lo, hi int
	part   func(string) string // nil: the whole string
}

func boundedPattern(expr string, lo, hi int, part func(string) string) bounded {
	return bounded{re: regexp.MustCompile(expr), lo: lo, hi: hi, part: part}
}

func (b bounded) MatchString(s string) bool {
	p := s
	if b.part != nil {
		p = b.part(s)
	}
	return len(p) >= b.lo && len(p) <= b.hi && b.re.MatchString(s)
}

// afterOptionalSlash is an SSM name without the one "/" it may start
// with (the "/" alone is a name of one character).
func afterOptionalSlash(s string) string {
	if len(s) > 1 {
		return strings.TrimPrefix(s, "/")
	}
	return s
}

// afterRole is the role name and path of an IAM role ARN: what follows
// its first ":role/" (the part before holds no other).
func afterRole(s string) string {
	_, name, _ := strings.Cut(s, ":role/")
	return name
}
