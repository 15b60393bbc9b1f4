package avro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/aws/smithy-go"
)

// Check is what test-connection says of the schema registry: OK with a
// detail, or not OK with the problem and its fix.
type Check struct {
	OK          bool
	Detail, Fix string
}

// Probe is where the connection test asks to register without
// registering: a subject (with Glue, a schema name) under the pipeline's
// topics, so that the grants that cover the pipeline's subjects cover it
// too. What it sends there is not an Avro schema (probeSchema): a registry
// authorizes the request before it reads the schema, so a caller allowed
// to register is told the schema is invalid, one that is not is refused,
// and nothing is registered either way.
type Probe struct {
	// Subject is asked to register under; no topic of the pipeline has it
	// (their subjects are <prefix>.<schema>.<table>-value and -key).
	Subject string
	// Prefix begins both Subject and the pipeline's own subjects: the
	// grant the fix names.
	Prefix string
}

// NewProbe is the probe of a pipeline with destination.topic_prefix, or
// with destination.topic when the prefix is empty; key when only keys are
// Avro.
func NewProbe(topicPrefix, topic string, key bool) *Probe {
	base, prefix := topicPrefix, topicPrefix+"."
	if topicPrefix == "" {
		base, prefix = topic, topic
	}
	suffix := "-value"
	if key {
		suffix = "-key"
	}
	return &Probe{Subject: base + ".tributary-permission-check" + suffix, Prefix: prefix}
}

// probeSchema is not Avro (not even JSON), so no registry can take it as a
// schema.
const probeSchema = "tributary test-connection: not an Avro schema, so that nothing is registered"

// Check reads the registry's subjects (reachability and sign-in) and, with
// a probe, asks to register probeSchema under p.Subject: allowed, the
// registry refuses the schema as invalid (HTTP 422, error code 42201);
// denied, HTTP 403 (or 401).
func (c *Confluent) Check(ctx context.Context, p *Probe) Check {
	var subjects []string
	err := c.do(ctx, CallLookup, "GET", "/subjects", nil, &subjects, "")
	host := c.url
	if u, perr := url.Parse(c.url); perr == nil {
		host = u.Host
	}
	reach := "check format.schema_registry.url (the API's base; Apicurio's is …/apis/ccompat/v7) and that the registry is reachable from here"
	if c.username != "" {
		reach += ", and its username and password"
	}
	if err != nil {
		return Check{Detail: err.Error(), Fix: reach}
	}
	read := fmt.Sprintf("Confluent API at %s answers, %d subjects readable", host, len(subjects))
	if p == nil {
		return Check{OK: true, Detail: read}
	}
	body, _ := json.Marshal(map[string]string{"schema": probeSchema})
	a, err := c.send(ctx, http.MethodPost, "/subjects/"+url.PathEscape(p.Subject)+"/versions", body)
	refused := err == nil && (a.code == 42201 || a.status == http.StatusUnprocessableEntity && a.code == 0 || a.status == http.StatusConflict)
	if err == nil && (a.status/100 == 2 || refused) {
		c.calls.count(CallRegister, nil)
	} else {
		c.calls.count(CallRegister, errors.New("refused"))
	}
	asked := "registering under subject " + p.Subject
	switch {
	case err != nil:
		return Check{Detail: read + "; " + asked + ": " + err.Error(), Fix: reach}
	case refused:
		return Check{OK: true, Detail: fmt.Sprintf("%s; may register under %s (the test's invalid schema was refused, HTTP %d, nothing registered)", read, p.Prefix, a.status)}
	case a.status/100 == 2:
		return Check{OK: true, Detail: read + "; may register, but the registry took the test's invalid schema under subject " + p.Subject +
			" (it does not validate Avro): delete that subject (DELETE /subjects/" + p.Subject + ")"}
	case a.status == http.StatusUnauthorized:
		return Check{Detail: fmt.Sprintf("%s; %s: the registry refused the credentials (HTTP 401): %s", read, asked, a.reason),
			Fix: "check format.schema_registry.username and password"}
	case a.status == http.StatusForbidden:
		return Check{Detail: fmt.Sprintf("%s, but may not register: %s: HTTP 403: %s", read, asked, a.reason), Fix: c.grantFix(p.Prefix)}
	case a.code == 42205:
		return Check{Detail: fmt.Sprintf("%s; %s: %s", read, asked, a.reason),
			Fix: "set the registry's mode to READWRITE (PUT /mode, or PUT /mode/<subject> for the pipeline's subjects)"}
	}
	return Check{Detail: fmt.Sprintf("%s; %s: HTTP %d: %s", read, asked, a.status, a.reason), Fix: reach}
}

// grantFix is the grant that lets the pipeline's user register under
// prefix, in each Confluent-compatible registry's words.
func (c *Confluent) grantFix(prefix string) string {
	user := "the pipeline's registry user"
	principal := "<user>"
	if c.username != "" {
		user, principal = "user "+c.username, c.username
	}
	return fmt.Sprintf("grant %s write and read on the subjects beginning %q: Confluent RBAC, the DeveloperWrite role on Subject:%s with --prefix; "+
		"Confluent ACLs, SUBJECT_WRITE and SUBJECT_READ on subject '%s*' (sr-acl-cli); Karapace, operation Write on resource 'Subject:%s*'; "+
		"Redpanda, rpk security acl create --allow-principal %s --operation write,read --registry-subject %s --resource-pattern-type prefixed; "+
		"Apicurio, the sr-developer role", user, prefix, prefix, prefix, prefix, principal, prefix)
}

// Check reads the registry (that it exists and that the task may read
// it) and, with a probe, asks for the definition probeSchema of schema
// p.Subject (GetSchemaByDefinition: the lookup the pipeline makes) and to
// register it as a new version (RegisterSchemaVersion). The probe's
// schema does not exist, so an allowed caller is told so
// (EntityNotFoundException), or that the definition is invalid, and a
// denied one gets AccessDeniedException; nothing is registered.
// CreateSchema is not asked: it cannot be without creating a schema.
func (g *Glue) Check(ctx context.Context, p *Probe) Check {
	out, err := g.client.GetRegistry(ctx, &glue.GetRegistryInput{RegistryId: &gluetypes.RegistryId{RegistryName: aws.String(g.registry)}})
	g.calls.count(CallLookup, err)
	if err != nil {
		var notFound *gluetypes.EntityNotFoundException
		switch {
		case errors.As(err, &notFound):
			return Check{Detail: "Glue schema registry " + g.registry + " does not exist",
				Fix: "create it (aws glue create-registry --registry-name " + g.registry + ") or correct format.schema_registry.registry_name and region"}
		case denied(err) != "":
			return Check{Detail: denied(err), Fix: g.grantFix("glue:GetRegistry, glue:GetSchemaByDefinition, glue:CreateSchema, glue:RegisterSchemaVersion and glue:GetSchemaVersion")}
		}
		return Check{Detail: err.Error(), Fix: g.unreachable()}
	}
	detail := "Glue schema registry " + g.registry + " readable"
	if out.Status != "" {
		detail += ", " + string(out.Status)
	}
	if p == nil {
		return Check{OK: true, Detail: detail}
	}

	id := &gluetypes.SchemaId{RegistryName: aws.String(g.registry), SchemaName: aws.String(p.Subject)}
	_, err = g.client.GetSchemaByDefinition(ctx, &glue.GetSchemaByDefinitionInput{SchemaId: id, SchemaDefinition: aws.String(probeSchema)})
	g.calls.count(CallLookup, answered(err))
	if err != nil && answered(err) != nil && !invalidInput(err) {
		if msg := denied(err); msg != "" {
			return Check{Detail: detail + ", but its schemas may not be looked up: " + msg,
				Fix: g.grantFix("glue:GetSchemaByDefinition and glue:GetSchemaVersion")}
		}
		return Check{Detail: detail + "; GetSchemaByDefinition " + p.Subject + ": " + err.Error(), Fix: g.unreachable()}
	}

	reg, err := g.client.RegisterSchemaVersion(ctx, &glue.RegisterSchemaVersionInput{SchemaId: id, SchemaDefinition: aws.String(probeSchema)})
	g.calls.count(CallRegister, answered(err))
	switch {
	case err == nil:
		return Check{OK: true, Detail: detail + "; may register, but Glue took the test's invalid definition as version " +
			aws.ToString(reg.SchemaVersionId) + " of schema " + p.Subject + ": delete that schema (aws glue delete-schema)"}
	case answered(err) == nil || invalidInput(err):
		return Check{OK: true, Detail: detail + "; may look up schemas and register versions under it (asked for schema " + p.Subject +
			", which does not exist: nothing registered; glue:CreateSchema is not tried, it would create one)"}
	case denied(err) != "":
		return Check{Detail: detail + ", but may not register schema versions: " + denied(err),
			Fix: g.grantFix("glue:RegisterSchemaVersion and glue:CreateSchema")}
	}
	return Check{Detail: detail + "; RegisterSchemaVersion " + p.Subject + ": " + err.Error(), Fix: g.unreachable()}
}

// grantFix is the IAM grant of actions that the pipeline needs.
func (g *Glue) grantFix(actions string) string {
	region := g.client.Options().Region
	return fmt.Sprintf("grant the task's role (or format.schema_registry.role_arn) %s on the registry and its schemas "+
		"(arn:aws:glue:%s:<account>:registry/%s and arn:aws:glue:%s:<account>:schema/%s/*); the CDK app grants these with -c glueRegistries",
		actions, region, g.registry, region, g.registry)
}

func (g *Glue) unreachable() string {
	return "check format.schema_registry.region, the task's AWS credentials and that Glue is reachable"
}

// denied is AWS's message when err is an access denial, else "".
func denied(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) && (api.ErrorCode() == "AccessDeniedException" || api.ErrorCode() == "AccessDenied") {
		if m := api.ErrorMessage(); m != "" {
			return m
		}
		return api.ErrorCode()
	}
	return ""
}

// invalidInput is Glue refusing the probe's definition: an answer only a
// caller it authorized gets.
func invalidInput(err error) bool {
	var invalid *gluetypes.InvalidInputException
	return errors.As(err, &invalid)
}
