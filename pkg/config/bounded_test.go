package config

import (
	"regexp"
	"strings"
	"testing"
)

// FuzzBoundedPatterns: each bounded pattern accepts exactly what the
// regular expression with the bound in it ({lo,hi}) accepts.
func FuzzBoundedPatterns(f *testing.F) {
	for _, s := range []string{"", "/", "//", "/a", "a", "shop", "tributary-checkpoints", "ab", "a b",
		"arn:aws:iam::123456789012:role/x", "arn:aws-cn:iam::123456789012:role/a/b/c", "arn:aws:iam::123456789012:role/",
		"arn:aws:iam::123456789012:role/" + strings.Repeat("r", 512), "arn:aws:iam::123456789012:role/" + strings.Repeat("r", 513),
		"/" + strings.Repeat("p", 1000), "/" + strings.Repeat("p", 1001), strings.Repeat("p", 1000), strings.Repeat("p", 1001),
		strings.Repeat("k", 64), strings.Repeat("k", 65), strings.Repeat("g", 255), strings.Repeat("g", 256), "reg$#.1"} {
		f.Add(s)
	}
	cases := []struct {
		name string
		b    bounded
		was  *regexp.Regexp
	}{
		{"validRoleARN", validRoleARN, regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/[\w+=,.@/-]{1,512}$`)},
		{"validDynamoName", validDynamoName, regexp.MustCompile(`^[A-Za-z0-9_.-]{3,255}$`)},
		{"ssmName", ssmName, regexp.MustCompile(`^/?[A-Za-z0-9_.\-/]{1,1000}$`)},
		{"glueName", glueName, regexp.MustCompile(`^[A-Za-z0-9_$#.-]{1,255}$`)},
		{"plainKey", plainKey, regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)},
		{"topicGroupName", topicGroupName, regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)},
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range cases {
			if got, want := c.b.MatchString(s), c.was.MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, the bounded regular expression says %v", c.name, s, got, want)
			}
		}
	})
}
