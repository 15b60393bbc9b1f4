package config

import (
	"errors"

	"github.com/tributary-cdc/tributary/pkg/debezium/route"
)

// Transforms are the single message transforms a Debezium user sets on
// the connector (transforms=…), by the names Debezium's documentation
// gives them; each key is the transform's option with '.' written '_'
// (docs/configuration.md, "transforms"). Applied in the order
// transforms=reroute,route.
type Transforms struct {
	// Reroute is io.debezium.transforms.ByLogicalTableRouter: sharded
	// tables into one topic. Default none.
	Reroute Reroute `yaml:"reroute" json:"reroute"`
	// Route is org.apache.kafka.connect.transforms.RegexRouter: topics
	// renamed, keys and values unchanged. Default none.
	Route Route `yaml:"route" json:"route"`
	// Outbox is io.debezium.transforms.outbox.EventRouter (outbox.go).
	// Default none.
	Outbox Outbox `yaml:"outbox" json:"outbox"`
}

// Reroute is ByLogicalTableRouter's options.
type Reroute struct {
	// TopicRegex (topic.regex), required: matched against a table's
	// whole topic.
	TopicRegex string `yaml:"topic_regex" json:"topic_regex"`
	// TopicReplacement (topic.replacement), required: the new topic, $n
	// and ${name} the regex's groups.
	TopicReplacement string `yaml:"topic_replacement" json:"topic_replacement"`
	// KeyEnforceUniqueness (key.enforce.uniqueness) adds KeyFieldName to
	// the key, holding the original topic. Default true.
	KeyEnforceUniqueness *bool `yaml:"key_enforce_uniqueness" json:"key_enforce_uniqueness"`
	// KeyFieldName (key.field.name). Default __dbz__physicalTableIdentifier.
	KeyFieldName string `yaml:"key_field_name" json:"key_field_name"`
	// KeyFieldRegex and KeyFieldReplacement (key.field.regex,
	// key.field.replacement) rename the original topic into the key
	// field's value. Default none: the original topic.
	KeyFieldRegex       string `yaml:"key_field_regex" json:"key_field_regex"`
	KeyFieldReplacement string `yaml:"key_field_replacement" json:"key_field_replacement"`
}

func (r Reroute) set() bool { return r != Reroute{} }

// Route is RegexRouter's options.
type Route struct {
	// Regex (regex), required: matched against a topic as a whole.
	Regex string `yaml:"regex" json:"regex"`
	// Replacement (replacement), required: the new topic.
	Replacement string `yaml:"replacement" json:"replacement"`
}

func (r Route) set() bool { return r != Route{} }

func asRouteError(err error, target **route.Error) bool { return errors.As(err, target) }

// Routes compiles the routing transforms; nil when there are none. Call
// it on a validated Config: errors are Validate's.
func (t Transforms) Routes() (*route.Routes, error) {
	var v validator
	var errs Errors
	v.errs = &errs
	r := v.routes(t)
	return r, errs.errOrNil()
}

// TopicRoutes is the document's routing transforms compiled, for the
// encoder; nil when there are none or when they are wrong (Validate
// reports that).
func (c *Config) TopicRoutes() *route.Routes {
	r, _ := c.Transforms.Routes()
	return r
}

func (v validator) transforms(c *Config) {
	t := c.Transforms
	if (t.Reroute.set() || t.Route.set()) && c.Destination.Topic != "" {
		v.add("transforms", "renames topics, and destination.topic sends every table to one topic: use one or the other")
	}
	v.routes(t)
	v.outbox(c)
}

// routes compiles t's routing transforms, adding a problem for each
// setting that is wrong.
func (v validator) routes(t Transforms) *route.Routes {
	var out route.Routes
	bad := false
	rename := func(field, regex, replacement string) *route.Rename {
		r, err := route.NewRename(regex, replacement)
		var re *route.Error
		switch {
		case err == nil:
			return r
		case errors.As(err, &re) && re.Part == route.PartRegex:
			v.add(field+"regex", "%s", err.Error())
		default:
			v.add(field+"replacement", "%s", err.Error())
		}
		bad = true
		return nil
	}
	// required adds a problem for a setting left empty, and says whether
	// it is set.
	required := func(field, value, what string) bool {
		if value == "" {
			v.add(field, "required: %s", what)
			bad = true
		}
		return value != ""
	}
	if r := t.Reroute; r.set() {
		const f = "transforms.reroute."
		regex := required(f+"topic_regex", r.TopicRegex, "the regular expression of the topics to merge, as ByLogicalTableRouter's topic.regex")
		replacement := required(f+"topic_replacement", r.TopicReplacement, "the topic they go to, as ByLogicalTableRouter's topic.replacement")
		l := &route.Logical{EnforceUniqueness: r.KeyEnforceUniqueness == nil || *r.KeyEnforceUniqueness,
			KeyFieldName: r.KeyFieldName}
		if l.KeyFieldName == "" {
			l.KeyFieldName = route.DefaultKeyFieldName
		}
		if regex && replacement {
			l.Topic = rename(f+"topic_", r.TopicRegex, r.TopicReplacement)
		}
		switch {
		case r.KeyFieldRegex != "" && r.KeyFieldReplacement == "":
			v.add(f+"key_field_replacement", "required with key_field_regex (ByLogicalTableRouter's key.field.replacement)")
			bad = true
		case r.KeyFieldRegex == "" && r.KeyFieldReplacement != "":
			v.add(f+"key_field_regex", "required with key_field_replacement (ByLogicalTableRouter's key.field.regex)")
			bad = true
		case r.KeyFieldRegex != "":
			l.KeyField = rename(f+"key_field_", r.KeyFieldRegex, r.KeyFieldReplacement)
		}
		out.Logical = l
	}
	if r := t.Route; r.set() {
		const f = "transforms.route."
		regex := required(f+"regex", r.Regex, "the regular expression of the topics to rename, as RegexRouter's regex")
		replacement := required(f+"replacement", r.Replacement, "the new topic, as RegexRouter's replacement")
		if regex && replacement {
			out.Regex = rename(f, r.Regex, r.Replacement)
		}
	}
	if bad || out.Logical == nil && out.Regex == nil {
		return nil
	}
	return &out
}
