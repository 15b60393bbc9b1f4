package config

import (
	"context"
	"fmt"
	"io"
	"os"
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
	var errs Errors
	cfg := &Config{}
	decodeDocument(data, cfg, &errs)
	resolveReferences(cfg, lookupEnv, &errs)
	cfg.ApplyDefaults()

	// A field already reported (it would not decode, or a reference in it
	// did not resolve) is not reported again by the rules.
	early := errs.Problems
	var rules Errors
	cfg.validate(&rules)
	for _, p := range rules.Problems {
		if !coveredBy(early, p.Field) {
			errs.Problems = append(errs.Problems, p)
		}
	}
	if err := errs.errOrNil(); err != nil {
		return nil, err
	}
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
// file path; ssm:/parameter/name refers to SSM Parameter Store, which needs
// the AWS build and fails with ErrSSMNotSupported for now. Problems in the
// document come back as an *Errors (reachable with errors.As).
func Load(ctx context.Context, ref string) (*Config, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ref == "" {
		return nil, fmt.Errorf("config: no file given")
	}
	if strings.HasPrefix(ref, "ssm:") {
		return nil, fmt.Errorf("config %s: %w", ref, ErrSSMNotSupported)
	}
	data, err := readFile(ref)
	if err != nil {
		return nil, err
	}
	cfg, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("config %s:\n%w", ref, err)
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
