package config

import (
	"fmt"
	"strings"
)

// Where one pipeline's document may reach. In a process that serves many
// pipelines (the Lambda functions), a document must not be able to read
// another pipeline's secrets (${ssm:/tributary/<other>/…}) or the
// process's environment (${env:…}) and have them shown back, e.g. as a
// broker address in a connection-test report.

// ReservedNames are the pipeline names the SSM layout of a deployment
// (docs/aws.md) takes for itself: documents live under
// <root>/pipelines/<name> and each pipeline's secrets under <root>/<name>/,
// so a pipeline named pipelines would have every document as its secrets.
var ReservedNames = []string{"pipelines"}

// WithReferenceScope makes Load refuse every ${ssm:…} reference that does
// not name a parameter under prefix (e.g. "/tributary/shop/"), before
// reading it.
func WithReferenceScope(prefix string) LoadOption {
	return func(o *loadOptions) { o.scope.prefix = prefix }
}

// WithoutEnvironment makes Load refuse every ${env:…} reference.
func WithoutEnvironment() LoadOption {
	return func(o *loadOptions) { o.scope.noEnv = true }
}

// WithResolvedValues makes Load call seen with the value of every
// reference it resolves, so the caller can keep those values out of
// whatever it shows or logs.
func WithResolvedValues(seen func(value string)) LoadOption {
	return func(o *loadOptions) { o.scope.seen = seen }
}

// referenceScope holds the options above; its zero value allows all.
type referenceScope struct {
	prefix string
	noEnv  bool
	seen   func(string)
}

// apply narrows l to the scope.
func (s referenceScope) apply(l lookups) lookups {
	env, ssm := l.env, l.ssm
	if s.noEnv {
		l.env = nil // resolve refuses ${env:…} without a lookup
	}
	if s.prefix != "" && ssm != nil {
		l.ssm = func(name string) (string, error) {
			if !strings.HasPrefix(name, s.prefix) || strings.Contains(name, "..") {
				return "", fmt.Errorf("parameter %s is outside %s, the only parameters this pipeline's document may reference", name, s.prefix)
			}
			return ssm(name)
		}
	}
	if s.seen != nil {
		if l.env != nil {
			l.env = func(name string) (string, bool) {
				v, ok := env(name)
				if ok {
					s.seen(v)
				}
				return v, ok
			}
		}
		if inner := l.ssm; inner != nil {
			l.ssm = func(name string) (string, error) {
				v, err := inner(name)
				if err == nil {
					s.seen(v)
				}
				return v, err
			}
		}
	}
	return l
}

// keyName is the leading name part of a document key: letters, digits,
// '_' and '-', at most 64 of them.
func keyName(key string) string {
	end := 0
	for end < len(key) && end < 64 {
		c := key[end]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			break
		}
		end++
	}
	return key[:end]
}
