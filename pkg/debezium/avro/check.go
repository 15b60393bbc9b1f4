package avro

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/aws/smithy-go"
)

// Check is what test-connection says of the schema registry: OK with a
// detail, or not OK with the problem and its fix. Registering is not tried
// (it would add schema versions); a registry that refuses it stalls the
// pipeline at the first record, with the registry's reason.
type Check struct {
	OK          bool
	Detail, Fix string
}

// Check reads the registry's subjects: reachability and sign-in.
func (c *Confluent) Check(ctx context.Context) Check {
	var subjects []string
	err := c.do(ctx, CallLookup, "GET", "/subjects", nil, &subjects, "")
	host := c.url
	if u, perr := url.Parse(c.url); perr == nil {
		host = u.Host
	}
	if err != nil {
		fix := "check format.schema_registry.url (the API's base; Apicurio's is …/apis/ccompat/v7) and that the registry is reachable from here"
		if c.username != "" {
			fix += ", and its username and password"
		}
		return Check{Detail: err.Error(), Fix: fix}
	}
	return Check{OK: true, Detail: fmt.Sprintf("Confluent API at %s answers, %d subjects readable", host, len(subjects))}
}

// Check reads the registry: that it exists and that the task may read it.
func (g *Glue) Check(ctx context.Context) Check {
	out, err := g.client.GetRegistry(ctx, &glue.GetRegistryInput{RegistryId: &gluetypes.RegistryId{RegistryName: aws.String(g.registry)}})
	g.calls.count(CallLookup, err)
	if err != nil {
		var notFound *gluetypes.EntityNotFoundException
		var api smithy.APIError
		switch {
		case errors.As(err, &notFound):
			return Check{Detail: "Glue schema registry " + g.registry + " does not exist",
				Fix: "create it (aws glue create-registry --registry-name " + g.registry + ") or correct format.schema_registry.registry_name and region"}
		case errors.As(err, &api) && (api.ErrorCode() == "AccessDeniedException" || api.ErrorCode() == "AccessDenied"):
			return Check{Detail: api.ErrorMessage(),
				Fix: "grant the task's role (or format.schema_registry.role_arn) glue:GetRegistry, glue:GetSchemaByDefinition, glue:CreateSchema, glue:RegisterSchemaVersion and glue:GetSchemaVersion on the registry and its schemas"}
		}
		return Check{Detail: err.Error(), Fix: "check format.schema_registry.region, the task's AWS credentials and that Glue is reachable"}
	}
	detail := "Glue schema registry " + g.registry + " readable"
	if out.Status != "" {
		detail += ", " + string(out.Status)
	}
	return Check{OK: true, Detail: detail}
}
