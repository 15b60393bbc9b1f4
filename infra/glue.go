package main

import (
	"fmt"
	"regexp"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsglue"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// A pipeline whose document writes Avro through the AWS Glue Schema
// Registry (format.schema_registry type glue, docs/formats.md) names the
// registry in context glueRegistries; its task role then gets the Glue
// actions Tributary calls, on that registry and its schemas only, and the
// stack creates the registry when asked ({"name": …, "create": true}).

// glueRegistryName is what Glue allows in a registry name.
var glueRegistryName = regexp.MustCompile(`^[A-Za-z0-9_$#.-]{1,255}$`)

// GlueRegistry is a pipeline's Glue schema registry.
type GlueRegistry struct {
	Name   string
	Create bool // the stack creates it (else it exists)
}

// glueRegistries reads context glueRegistries: {"<pipeline>": "<registry>"
// or {"name": "<registry>", "create": true}, …}.
func glueRegistries(raw map[string]any, pipelines []Pipeline, names string) error {
	for name, v := range raw {
		at := "context glueRegistries." + name
		var r GlueRegistry
		switch v := v.(type) {
		case string:
			r.Name = v
		case map[string]any:
			r.Name, _ = v["name"].(string)
			switch c := v["create"].(type) {
			case nil:
			case bool:
				r.Create = c
			default:
				return fmt.Errorf("%s.create %v: want true or false", at, c)
			}
		}
		if !glueRegistryName.MatchString(r.Name) {
			return fmt.Errorf("%s %v: want a registry name (1-255 of letters, digits, _ $ # . -) or {\"name\": …, \"create\": true}", at, v)
		}
		found := false
		for i := range pipelines {
			if pipelines[i].Name == name {
				pipelines[i].Glue, found = &r, true
			}
		}
		if !found {
			return fmt.Errorf("context glueRegistries: %q is not one of the pipelines (%s)", name, names)
		}
	}
	return nil
}

// grantGlue lets a pipeline's task role register and read the schemas of
// its registry (pkg/debezium/avro/glue.go: GetSchemaByDefinition,
// CreateSchema, RegisterSchemaVersion, GetSchemaVersion; GetRegistry for
// the connection check), and creates the registry when asked.
func grantGlue(stack awscdk.Stack, role awsiam.Role, p Pipeline) {
	g := p.Glue
	if g.Create {
		awsglue.NewCfnRegistry(stack, jsii.String("GlueRegistry-"+p.Name), &awsglue.CfnRegistryProps{
			Name:        jsii.String(g.Name),
			Description: jsii.String("Avro schemas of Tributary pipeline " + p.Name),
		})
	}
	arn := func(resource string) *string {
		return awscdk.Fn_Sub(jsii.String("arn:${AWS::Partition}:glue:${AWS::Region}:${AWS::AccountId}:"+resource), nil)
	}
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("GlueSchemaRegistry"),
		Actions: jsii.Strings("glue:GetRegistry", "glue:GetSchemaByDefinition", "glue:CreateSchema", "glue:RegisterSchemaVersion",
			"glue:GetSchemaVersion"),
		Resources: &[]*string{arn("registry/" + g.Name), arn("schema/" + g.Name + "/*")},
	}))
}

// grantGlueCheck lets the connection test read a pipeline's registry
// (GetRegistry only: as its own role it asks nothing more; it asks whether
// the pipeline may register only as the pipeline's role_arn, and never
// registers).
func grantGlueCheck(stack awscdk.Stack, fn awslambda.Function, p Pipeline) {
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("glue:GetRegistry"),
		Resources: &[]*string{awscdk.Fn_Sub(jsii.String("arn:${AWS::Partition}:glue:${AWS::Region}:${AWS::AccountId}:registry/"+p.Glue.Name), nil)},
	}))
}
