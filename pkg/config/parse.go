package config

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Parse reads one pipeline document, YAML or JSON, and returns it ready to
// use: ${env:NAME} references resolved, defaults applied, validated.
// Unknown keys are errors. On any problem it returns an *Errors naming
// every field at fault (never a configured value) and no Config.
func Parse(data []byte) (*Config, error) {
	return parse(data, os.LookupEnv)
}

func parse(data []byte, lookupEnv func(string) (string, bool)) (*Config, error) {
	return parseWith(data, lookups{env: lookupEnv})
}

func parseWith(data []byte, l lookups) (*Config, error) {
	var errs Errors
	cfg := &Config{}
	positions := decodeDocument(data, cfg, &errs)
	// A field whose variable is unset, for a command that does not use it
	// (WithUnsetEnvironment), holds "": the rules do not judge that value
	// either (a mask's salt "" is not the salt the pipeline runs with).
	var unset []Problem
	if tell := l.unset; tell != nil {
		l.unset = func(field, problem string) {
			unset = append(unset, Problem{Field: field})
			tell(field, problem)
		}
	}
	resolveReferences(cfg, l, &errs)
	cfg.ApplyDefaults()

	// A field already reported (it would not decode, or a reference in it
	// did not resolve) is not reported again by the rules.
	early := append(slices.Clip(errs.Problems), unset...)
	var rules Errors
	cfg.validate(&rules)
	for _, p := range rules.Problems {
		if !coveredBy(early, p.Field) {
			errs.Problems = append(errs.Problems, p)
		}
	}
	locate(errs.Problems, positions)
	// The rules quote no value that came through a reference; should one
	// slip through, the value is taken out here.
	errs.Problems = NewScrubber(cfg.references.values...).Problems(errs.Problems)
	if err := errs.errOrNil(); err != nil {
		return nil, err
	}
	cfg.positions = positions
	return cfg, nil
}

func coveredBy(problems []Problem, field string) bool {
	for _, p := range problems {
		if covers(p.Field, field) {
			return true
		}
	}
	return false
}

// Load reads the pipeline document that ref names and parses it. ref is a
// file path, or ssm:/parameter/name for a document kept in SSM Parameter
// Store (read with decryption). ${ssm:/name} references in the document are
// read from SSM with decryption too; the SSM client is made from the SDK's
// standard environment (AWS_REGION, AWS_ENDPOINT_URL, …) only when one is
// needed, unless WithSSMClient gives one. A missing document parameter is
// a *ParameterError matching ErrParameterNotFound; problems in the
// document, unresolvable references included, come back as an *Errors
// (reachable with errors.As). No error holds a secret value.
func Load(ctx context.Context, ref string, opts ...LoadOption) (*Config, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ref == "" {
		return nil, fmt.Errorf("config: no file given")
	}
	o := loadOptions{}
	for _, opt := range opts {
		opt(&o)
	}
	params := &parameterReader{client: o.ssm}
	var data []byte
	if name, ok := strings.CutPrefix(ref, "ssm:"); ok {
		if !ssmName.MatchString(name) {
			return nil, fmt.Errorf("config %s: malformed SSM parameter name (letters, digits and '_', '.', '-', '/')", ref)
		}
		v, err := params.get(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("config %s: %w", ref, err)
		}
		data = []byte(v)
	} else {
		var err error
		if data, err = readFile(ref); err != nil {
			return nil, err
		}
	}
	cfg, err := parseWith(data, o.scope.apply(lookups{
		env:         os.LookupEnv,
		ssm:         func(name string) (string, error) { return params.get(ctx, name) },
		unset:       o.unset,
		placeholder: o.placeholder,
	}))
	if err != nil {
		return nil, fmt.Errorf("invalid configuration %s:\n%w", ref, err)
	}
	return cfg, nil
}

// readFile reads at most maxDocumentBytes; its errors name the path.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if len(data) > maxDocumentBytes {
		return nil, fmt.Errorf("read config %s: larger than %d MiB", path, maxDocumentBytes>>20)
	}
	return data, nil
}
