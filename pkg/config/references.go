package config

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

// A string field may be, or contain, ${env:NAME} (an environment variable)
// or ${ssm:/name} (an SSM parameter, SecureStrings decrypted; Load resolves
// these, Parse cannot). Resolved values are not scanned again, so a secret
// that happens to contain "${" stays as it is. Other "${" text is left alone.

var (
	envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	ssmName = boundedPattern(`^[A-Za-z0-9_.\-/]+$`, 1, 1000, afterOptionalSlash)
)

// lookups are where references are read from.
type lookups struct {
	env func(name string) (string, bool)
	// ssm reads a parameter (decrypted); nil where SSM is not available
	// (Parse). Its errors name the parameter, never a value.
	ssm func(name string) (string, error)
	// unset, when set, takes an ${env:…} reference to an unset variable
	// instead of a problem (WithUnsetEnvironment, unset.go).
	unset func(field, problem string)
	// placeholder is what such a reference resolves to; "" by default.
	placeholder string
}

// references records what resolveReferences did: which fields hold a
// value read through a reference, and the values read. Checks name such a
// field's rule without quoting its value, and every problem is scrubbed of
// the values (scrub.go): a reference is where secrets come from.
type references struct {
	fields map[string]bool
	values []string
}

// fromReference reports whether field's value came, whole or in part, from
// a reference.
func (r references) fromReference(field string) bool { return r.fields[field] }

// resolveReferences replaces every ${env:…} and ${ssm:…} reference in cfg's
// strings, and records them in cfg.references. Problems name the field and
// the variable, never a value.
func resolveReferences(cfg *Config, l lookups, errs *Errors) {
	refs := references{fields: map[string]bool{}}
	each := func(field string, s *string) {
		*s = resolve(field, *s, l, errs, func(v string) {
			refs.fields[field] = true
			refs.values = append(refs.values, v)
		})
	}
	eachString(reflect.ValueOf(cfg).Elem(), "", each)
	// Other source types' settings are resolved too: Warnings reports
	// them, and a reference that fails is a problem wherever it is.
	for i := range cfg.Source.foreign {
		eachString(reflect.ValueOf(cfg.Source.foreign).Index(i), "source", each)
	}
	cfg.references = refs
}

// resolve returns s with its references replaced, calling read with each
// value read.
func resolve(field, s string, l lookups, errs *Errors, read func(value string)) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, "${")
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(rest[:i])
		ref := rest[i+2:]
		kind := ""
		switch {
		case strings.HasPrefix(ref, "env:"):
			kind = "env"
		case strings.HasPrefix(ref, "ssm:"):
			kind = "ssm"
		default:
			b.WriteString("${")
			rest = ref
			continue
		}
		end := strings.IndexByte(ref, '}')
		if end < 0 {
			errs.add(field, fmt.Sprintf("unterminated ${%s:…} reference (missing '}')", kind))
			return s
		}
		name := ref[len(kind)+1 : end]
		rest = ref[end+1:]
		switch kind {
		case "env":
			if !envName.MatchString(name) {
				errs.add(field, "malformed ${env:…} reference: a variable name is letters, digits and '_'")
				continue
			}
			if l.env == nil {
				errs.add(field, fmt.Sprintf("${env:%s}: environment references are not allowed here; use ${ssm:…}", name))
				continue
			}
			v, ok := l.env(name)
			if !ok {
				problem := fmt.Sprintf("environment variable %s is not set (referenced as ${env:%s})", name, name)
				if l.unset != nil {
					l.unset(field, problem)
					b.WriteString(l.placeholder)
				} else {
					errs.add(field, problem)
				}
				continue
			}
			read(v)
			b.WriteString(v)
		case "ssm":
			if !ssmName.MatchString(name) {
				errs.add(field, "malformed ${ssm:…} reference: a parameter name is letters, digits and '_', '.', '-', '/'")
				continue
			}
			if l.ssm == nil {
				errs.add(field, fmt.Sprintf("${ssm:%s} cannot be resolved: %s", name, ssmNeedsLoad))
				continue
			}
			v, err := l.ssm(name)
			if err != nil {
				errs.add(field, fmt.Sprintf("%v (referenced as ${ssm:%s})", err, name))
				continue
			}
			read(v)
			b.WriteString(v)
		}
	}
}

// eachString calls fn for every string in v (a Config or a part of one),
// with its field path. Lists of strings are visited element by element.
func eachString(v reflect.Value, path string, fn func(field string, s *string)) {
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			switch f := t.Field(i); {
			case f.Type == settingsType:
				// A kind's settings: its keys are the section's own.
				eachString(v.Field(i), path, fn)
			case keyed(f):
				eachString(v.Field(i), join(path, yamlName(f)), fn)
			}
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		c := reflect.New(v.Elem().Type()).Elem()
		c.Set(v.Elem())
		eachString(c, path, fn)
		v.Set(c)
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			eachString(v.Index(i), fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case reflect.String:
		fn(path, v.Addr().Interface().(*string))
	}
}
