package main

import (
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// TestGlueRegistryGrants: a pipeline with a Glue registry (billing, which
// the stack creates) gets the Glue actions Tributary calls on that
// registry and its schemas only; a pipeline without one gets no Glue action;
// the connection test may read the registry only.
func TestGlueRegistryGrants(t *testing.T) {
	stacks(t)
	defer failOnPanic(t)
	dpTmpl.HasResourceProperties(jsii.String("AWS::Glue::Registry"), obj("Name", "billing-schemas"))
	sub := func(resource string) any {
		return obj("Fn::Sub", "arn:${AWS::Partition}:glue:${AWS::Region}:${AWS::AccountId}:"+resource)
	}
	dpTmpl.HasResourceProperties(jsii.String("AWS::IAM::Policy"), obj(
		"Roles", []any{obj("Ref", assertions.Match_StringLikeRegexp(jsii.String("Pipelinebilling.*TaskRole.*")))},
		"PolicyDocument", obj("Statement", assertions.Match_ArrayWith(&[]any{
			assertions.Match_ObjectLike(obj("Sid", "GlueSchemaRegistry",
				"Action", []any{"glue:GetRegistry", "glue:GetSchemaByDefinition", "glue:CreateSchema", "glue:RegisterSchemaVersion", "glue:GetSchemaVersion"},
				"Resource", []any{sub("registry/billing-schemas"), sub("schema/billing-schemas/*")})),
		})),
	))
	// The connection test reads the registry (its "schema registry" line)
	// and registers nothing.
	dpTmpl.HasResourceProperties(jsii.String("AWS::IAM::Policy"), obj(
		"Roles", []any{obj("Ref", assertions.Match_StringLikeRegexp(jsii.String("ConnectionTestFunctionServiceRole.*")))},
		"PolicyDocument", obj("Statement", assertions.Match_ArrayWith(&[]any{
			assertions.Match_ObjectLike(obj("Action", "glue:GetRegistry", "Resource", sub("registry/billing-schemas"))),
		})),
	))
	for _, p := range *dpTmpl.FindResources(jsii.String("AWS::IAM::Policy"), obj("Properties", obj(
		"Roles", []any{obj("Ref", assertions.Match_StringLikeRegexp(jsii.String("ConnectionTestFunctionServiceRole.*")))},
	))) {
		if s := jsonString(p); strings.Contains(s, "glue:CreateSchema") || strings.Contains(s, "glue:RegisterSchemaVersion") {
			t.Errorf("the connection test may register schemas: %s", s)
		}
	}
	policies := dpTmpl.FindResources(jsii.String("AWS::IAM::Policy"), obj("Properties", obj(
		"Roles", []any{obj("Ref", assertions.Match_StringLikeRegexp(jsii.String("Pipelineshop.*TaskRole.*")))},
	)))
	for _, p := range *policies {
		if s := jsonString(p); strings.Contains(s, "glue:") {
			t.Errorf("shop's task role has Glue actions without a Glue registry: %s", s)
		}
	}
}
