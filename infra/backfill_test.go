package main

import (
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// The backfill route is IAM-authorized like the connection test, and its
// function may do one thing: dynamodb:UpdateItem on the deployed
// pipelines' items of the checkpoint table (no VPC, no SSM, no KMS).
func TestBackfillRouteAndLeastPrivilege(t *testing.T) {
	stacks(t)
	defer failOnPanic(t)
	dpTmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Route"), obj(
		"RouteKey", "POST /pipelines/{name}/backfill", "AuthorizationType", "AWS_IAM"))
	fns := dpTmpl.FindResources(jsii.String("AWS::Lambda::Function"), obj("Properties", obj(
		"Role", obj("Fn::GetAtt", []any{assertions.Match_StringLikeRegexp(jsii.String("BackfillFunctionServiceRole.*")), "Arn"}),
	)))
	if len(*fns) != 1 {
		t.Fatalf("%d backfill functions, want 1", len(*fns))
	}
	for id, fn := range *fns {
		s := jsonString(fn)
		if strings.Contains(s, "VpcConfig") {
			t.Errorf("%s runs in the VPC; it only writes DynamoDB: %s", id, s)
		}
		if !strings.Contains(s, `"CHECKPOINT_TABLE":{"Ref":"Checkpoints`) {
			t.Errorf("%s does not get the checkpoint table's name: %s", id, s)
		}
	}
	policies := dpTmpl.FindResources(jsii.String("AWS::IAM::Policy"), obj("Properties", obj(
		"Roles", []any{obj("Ref", assertions.Match_StringLikeRegexp(jsii.String("BackfillFunctionServiceRole.*")))},
	)))
	if len(*policies) != 1 {
		t.Fatalf("%d policies on the backfill role, want 1", len(*policies))
	}
	for id, p := range *policies {
		var doc struct {
			Properties struct {
				PolicyDocument struct {
					Statement []struct {
						Action    any
						Resource  any
						Condition map[string]map[string]any
					}
				}
			}
		}
		if err := jsonUnmarshal(jsonString(p), &doc); err != nil {
			t.Fatal(err)
		}
		st := doc.Properties.PolicyDocument.Statement
		if len(st) != 1 || st[0].Action != "dynamodb:UpdateItem" {
			t.Fatalf("%s: statements %s, want only dynamodb:UpdateItem", id, jsonString(st))
		}
		if r := jsonString(st[0].Resource); !strings.Contains(r, `"Checkpoints`) || strings.Contains(r, "*") {
			t.Errorf("%s: resource %s, want the checkpoint table only", id, r)
		}
		all := st[0].Condition["ForAllValues:StringEquals"]
		if keys := jsonString(all["dynamodb:LeadingKeys"]); keys != `["shop","billing"]` {
			t.Errorf("%s: leading keys %v, want the deployed pipelines shop,billing", id, keys)
		}
		// Only the request's attributes (and the key every request
		// names): not a pipeline's position, lease or status, nor an
		// answer holding them.
		if attrs := jsonString(all["dynamodb:Attributes"]); attrs != `["pipeline","backfill","backfill_count","backfill_last"]` {
			t.Errorf("%s: attributes %s, want the key and the request's only", id, attrs)
		}
		ifExists := st[0].Condition["StringEqualsIfExists"]
		if sel, rv := jsonString(ifExists["dynamodb:Select"]), jsonString(ifExists["dynamodb:ReturnValues"]); sel != `"SPECIFIC_ATTRIBUTES"` ||
			rv != `["NONE","UPDATED_OLD","UPDATED_NEW"]` {
			t.Errorf("%s: Select %s, ReturnValues %s: want SPECIFIC_ATTRIBUTES and NONE/UPDATED_OLD/UPDATED_NEW", id, sel, rv)
		}
	}
	dpTmpl.HasOutput(jsii.String("BackfillUrl"), obj())
}
