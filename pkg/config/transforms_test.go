package config

import (
	"errors"
	"strings"
	"testing"
)

// A document with the routing transforms, as a Debezium user writes them.
func TestTransformsParse(t *testing.T) {
	cfg := mustParse(t, validYAML+`transforms:
  reroute:
    topic_regex: '(.*)\.orders_(\d+)'
    topic_replacement: '$1.orders'
    key_field_name: shard
    key_field_regex: '.*_(\d+)'
    key_field_replacement: 'shard-$1'
  route:
    regex: 'shop\.public\.(.*)'
    replacement: 'cdc.$1'
`)
	r := cfg.TopicRoutes()
	if r == nil || r.Logical == nil || r.Regex == nil {
		t.Fatalf("routes %+v", r)
	}
	got := r.Route("shop.public.orders_3")
	if got.Topic != "cdc.orders" || got.SchemaBase != "shop.public.orders" || got.KeyField != "shard" || got.KeyValue != "shard-3" {
		t.Errorf("routed %+v", got)
	}
	if !r.Logical.EnforceUniqueness {
		t.Error("key_enforce_uniqueness must default to true")
	}
	if mustParse(t, validYAML).TopicRoutes() != nil {
		t.Error("routes without transforms")
	}
}

// Every wrong setting is reported, naming its field, all at once.
func TestTransformsRules(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      map[string]string // field → part of its message
	}{
		{"required", "transforms:\n  reroute:\n    key_field_name: shard\n  route:\n    replacement: x\n", map[string]string{
			"transforms.reroute.topic_regex":       "required",
			"transforms.reroute.topic_replacement": "required",
			"transforms.route.regex":               "required",
		}},
		{"bad regexes", "transforms:\n  reroute:\n    topic_regex: '(.*'\n    topic_replacement: x\n    key_field_regex: 'a(?=b)'\n    key_field_replacement: y\n  route:\n    regex: '[z'\n    replacement: x\n", map[string]string{
			"transforms.reroute.topic_regex":     "not a valid regular expression: error parsing regexp: missing closing )",
			"transforms.reroute.key_field_regex": "not a valid regular expression",
			"transforms.route.regex":             "not a valid regular expression: error parsing regexp: missing closing ]",
		}},
		{"bad replacements", "transforms:\n  reroute:\n    topic_regex: '(.*)'\n    topic_replacement: '$2'\n  route:\n    regex: '(?P<a>.*)'\n    replacement: '${b}'\n", map[string]string{
			"transforms.reroute.topic_replacement": "$2: the regex has 1 group(s)",
			"transforms.route.replacement":         "no group named b",
		}},
		{"key field pair", "transforms:\n  reroute:\n    topic_regex: a\n    topic_replacement: b\n    key_field_regex: c\n", map[string]string{
			"transforms.reroute.key_field_replacement": "required with key_field_regex",
		}},
		{"key field pair reversed", "transforms:\n  reroute:\n    topic_regex: a\n    topic_replacement: b\n    key_field_replacement: c\n", map[string]string{
			"transforms.reroute.key_field_regex": "required with key_field_replacement",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse([]byte(validYAML+tc.doc), testEnv)
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error %v", err)
			}
			got := map[string]string{}
			for _, p := range errs.Problems {
				got[p.Field] = p.Message
			}
			for f, msg := range tc.want {
				if !strings.Contains(got[f], msg) {
					t.Errorf("%s: %q, want it to say %q (all: %v)", f, got[f], msg, err)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("problems %v, want %d", err, len(tc.want))
			}
		})
	}
}

// destination.topic already sends every table to one topic.
func TestTransformsWithOneTopic(t *testing.T) {
	doc := strings.Replace(validYAML, "topic_prefix: shop", "topic: shop.changes", 1)
	_, err := parse([]byte(doc+"transforms:\n  route:\n    regex: a\n    replacement: b\n"), testEnv)
	if err == nil || !strings.Contains(err.Error(), "transforms: renames topics, and destination.topic") {
		t.Errorf("error %v", err)
	}
}
