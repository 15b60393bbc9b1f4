package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

const (
	testShopWriter    = "arn:aws:iam::111122223333:role/tributary-writer-shop"
	testBillingWriter = "arn:aws:iam::111122223333:role/tributary-writer-billing"
	testKMSKey        = "arn:aws:kms:us-east-1:444455556666:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
)

// Two deploys of one deployment, the second with every option changed:
// what `cdk deploy` would send CloudFormation the first and the second time.
var (
	redeployOnce  sync.Once
	firstDeploy   assertions.Template
	secondDeploy  assertions.Template
	secondStack   awscdk.Stack
	redeployError error
)

func redeploys(t *testing.T) {
	t.Helper()
	redeployOnce.Do(func() {
		root, err := os.MkdirTemp("", "tributary-cdk-redeploy-")
		if err != nil {
			panic(err)
		}
		for _, f := range []string{"cdk.json", "bin/functions/connection-test/bootstrap", "bin/functions/row-skipped/bootstrap", "bin/functions/backfill/bootstrap"} {
			p := filepath.Join(root, f)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte("{}\n"), 0o755)
		}
		synth := func(out string, ctx map[string]any) (awscdk.Stack, assertions.Template) {
			ctx["pipelines"], ctx["deployment"], ctx["image"] = "shop,billing", "bravo", testImage
			app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(out), Context: &ctx})
			if redeployError = build(app, root); redeployError != nil {
				return nil, nil
			}
			st := app.Node().FindChild(jsii.String("bravo-Tributary")).(awscdk.Stack)
			return st, assertions.Template_FromStack(st, nil)
		}
		_, firstDeploy = synth(filepath.Join(root, "first"), map[string]any{})
		out := filepath.Join(root, "second")
		if d := os.Getenv("CFN_TEMPLATES_DIR"); d != "" {
			out = d // `make test` runs cfn-lint on every option at once
		}
		secondStack, secondDeploy = synth(out, map[string]any{
			"customerRoles": `{"shop":"` + testShopWriter + `","billing":"` + testBillingWriter + `"}`,
			"desiredCount":  "1",
			"taskCpu":       "1024",
			"taskMemory":    "4096",
			"vpcCidr":       "10.42.0.0/16",
			"natGateways":   "2",
			"vpcEndpoints":  "true",
			"kmsKeyArn":     testKMSKey,
		})
	})
	if redeployError != nil {
		t.Fatal(redeployError)
	}
}

func templateJSON(t *testing.T, tm assertions.Template) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(jsonString(tm.ToJSON())), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRedeployLeavesDocumentsAlone: no pipeline document is a
// CloudFormation value. A deploy with other context (here: customer roles,
// sizes, network) changes nothing the operator wrote: the only place a
// document appears is the create-only put (Overwrite false, an existing
// parameter left alone), with no update and no delete call, under the same
// logical IDs in both deploys.
func TestRedeployLeavesDocumentsAlone(t *testing.T) {
	redeploys(t)
	defer failOnPanic(t)
	ids := map[string][]string{}
	for name, tm := range map[string]assertions.Template{"first": firstDeploy, "second": secondDeploy} {
		tm.ResourceCountIs(jsii.String("AWS::SSM::Parameter"), jsii.Number(0))
		resources := templateJSON(t, tm)["Resources"].(map[string]any)
		for id, r := range resources {
			r := r.(map[string]any)
			props, _ := r["Properties"].(map[string]any)
			if r["Type"] != "Custom::AWS" {
				if s := jsonString(r); strings.Contains(s, "bootstrap_servers") {
					t.Errorf("%s deploy: %s (%s) holds a pipeline document: %s", name, id, r["Type"], s)
				}
				continue
			}
			ids[name] = append(ids[name], id)
			if _, has := props["Update"]; has {
				t.Errorf("%s deploy: %s writes on update", name, id)
			}
			if _, has := props["Delete"]; has {
				t.Errorf("%s deploy: %s deletes", name, id)
			}
			create := jsonString(props["Create"])
			for _, want := range []string{`\"action\":\"putParameter\"`, `\"Overwrite\":false`, `\"ignoreErrorCodesMatching\":\"ParameterAlreadyExists\"`,
				`\"Name\":\"/tributary-bravo/pipelines/`} {
				if !strings.Contains(create, want) {
					t.Errorf("%s deploy: %s's create lacks %s: %s", name, id, want, create)
				}
			}
		}
	}
	if len(ids["first"]) != 2 || len(ids["second"]) != 2 || strings.Join(sorted(ids["first"]), ",") != strings.Join(sorted(ids["second"]), ",") {
		t.Errorf("starter documents: first deploy %v, second %v: want the same two", ids["first"], ids["second"])
	}
	// The roles from the second context reach the starter (for a pipeline
	// created then), not the parameter.
	if s := jsonString(secondDeploy.FindResources(jsii.String("Custom::AWS"), nil)); !strings.Contains(s, "aws_role_arn: "+testBillingWriter) {
		t.Errorf("billing's starter document lacks its customer role: %s", s)
	}
}

// TestDestroyAndRedeploy: nothing the stack keeps after `cdk destroy`
// (or after a failed create) has a fixed name, so the next deploy never
// collides with it; the checkpoint table is deletion-protected and kept on
// replacement and on delete; the DLQ and the log groups are kept; no IAM
// role has a fixed (account-wide) name.
func TestDestroyAndRedeploy(t *testing.T) {
	stacks(t)
	redeploys(t)
	defer failOnPanic(t)
	for _, tm := range []assertions.Template{dpTmpl, secondDeploy} {
		tm.HasResource(jsii.String("AWS::DynamoDB::Table"), obj(
			"DeletionPolicy", "RetainExceptOnCreate", "UpdateReplacePolicy", "Retain",
			"Properties", assertions.Match_ObjectLike(obj("DeletionProtectionEnabled", true, "TableName", assertions.Match_Absent())),
		))
		tm.HasResource(jsii.String("AWS::SQS::Queue"), obj(
			"DeletionPolicy", "RetainExceptOnCreate",
			"Properties", assertions.Match_ObjectLike(obj("MessageRetentionPeriod", 14*24*3600, "QueueName", assertions.Match_Absent())),
		))
		tm.AllResources(jsii.String("AWS::Logs::LogGroup"), obj("DeletionPolicy", assertions.Match_StringLikeRegexp(jsii.String("Retain.*"))))
		tm.AllResourcesProperties(jsii.String("AWS::IAM::Role"), obj("RoleName", assertions.Match_Absent()))
		for id, r := range templateJSON(t, tm)["Resources"].(map[string]any) {
			r := r.(map[string]any)
			if p, _ := r["DeletionPolicy"].(string); !strings.HasPrefix(p, "Retain") {
				continue
			}
			props, _ := r["Properties"].(map[string]any)
			for _, k := range []string{"TableName", "QueueName", "LogGroupName"} {
				if _, named := props[k]; named {
					t.Errorf("%s is retained with a fixed %s: a redeploy after cdk destroy collides", id, k)
				}
			}
		}
		tm.HasOutput(jsii.String("CheckpointTableName"), obj())
		tm.HasOutput(jsii.String("TaskRoleArnShop"), obj())
		tm.HasOutput(jsii.String("ConnectionTestRoleArn"), obj())
	}
}

// TestTaskMemoryFollowsSize: the Go runtime's soft limit is 3/4 of the
// task's memory (the app's own default, then 80 MiB, kept a 1 GiB task collecting
// all the time).
func TestTaskMemoryFollowsSize(t *testing.T) {
	stacks(t)
	redeploys(t)
	defer failOnPanic(t)
	for tm, want := range map[assertions.Template][3]string{dpTmpl: {"512", "1024", "768MiB"}, secondDeploy: {"1024", "4096", "3072MiB"}} {
		tm.AllResourcesProperties(jsii.String("AWS::ECS::TaskDefinition"), obj(
			"Cpu", want[0], "Memory", want[1],
			"ContainerDefinitions", []any{assertions.Match_ObjectLike(obj(
				"Environment", assertions.Match_ArrayWith(&[]any{obj("Name", "GOMEMLIMIT", "Value", want[2])}),
			))},
		))
	}
}

// TestEachPipelineAssumesItsOwnRole: -c customerRoles gives each pipeline
// its role: its task may assume that one only, the connection test both.
func TestEachPipelineAssumesItsOwnRole(t *testing.T) {
	redeploys(t)
	defer failOnPanic(t)
	for pipeline, own := range map[string]string{"shop": testShopWriter, "billing": testBillingWriter} {
		other := testShopWriter
		if other == own {
			other = testBillingWriter
		}
		policies := secondDeploy.FindResources(jsii.String("AWS::IAM::Policy"), obj("Properties", obj(
			"Roles", []any{obj("Ref", assertions.Match_StringLikeRegexp(jsii.String("Pipeline"+pipeline+".*TaskRole.*")))},
		)))
		s := jsonString(policies)
		if !strings.Contains(s, `"Action":"sts:AssumeRole","Effect":"Allow","Resource":"`+own+`"`) || strings.Contains(s, other) {
			t.Errorf("%s's task role: want AssumeRole on %s only: %s", pipeline, own, s)
		}
	}
	s := jsonString(secondDeploy.FindResources(jsii.String("AWS::IAM::Policy"), obj("Properties", obj(
		"Roles", []any{obj("Ref", assertions.Match_StringLikeRegexp(jsii.String("ConnectionTestFunctionServiceRole.*")))},
	))))
	if !strings.Contains(s, testShopWriter) || !strings.Contains(s, testBillingWriter) {
		t.Errorf("the connection test cannot assume both customer roles: %s", s)
	}
}

// TestNetworkOptions: a new VPC's range, a NAT gateway per AZ, the free
// gateway endpoints always and the interface endpoints on request; the
// starter document's port matches its authentication.
func TestNetworkOptions(t *testing.T) {
	stacks(t)
	redeploys(t)
	defer failOnPanic(t)
	dpTmpl.HasResourceProperties(jsii.String("AWS::EC2::VPC"), obj("CidrBlock", defaultVpcCidr))
	dpTmpl.ResourceCountIs(jsii.String("AWS::EC2::NatGateway"), jsii.Number(1))
	secondDeploy.HasResourceProperties(jsii.String("AWS::EC2::VPC"), obj("CidrBlock", "10.42.0.0/16"))
	secondDeploy.ResourceCountIs(jsii.String("AWS::EC2::NatGateway"), jsii.Number(2))
	for _, tm := range []assertions.Template{dpTmpl, secondDeploy} {
		for _, svc := range []string{"dynamodb", "s3"} {
			tm.HasResourceProperties(jsii.String("AWS::EC2::VPCEndpoint"), obj(
				"VpcEndpointType", "Gateway",
				"ServiceName", obj("Fn::Join", []any{"", []any{"com.amazonaws.", obj("Ref", "AWS::Region"), "." + svc}}),
			))
		}
		tm.HasOutput(jsii.String("SecurityGroupId"), obj())
		// The webhook function (URLs from documents) is not in the group
		// MSK and the database admit; the connection test is.
		tm.HasResourceProperties(jsii.String("AWS::Lambda::Function"), obj(
			"Role", obj("Fn::GetAtt", []any{assertions.Match_StringLikeRegexp(jsii.String("RowSkippedFunctionServiceRole.*")), "Arn"}),
			"VpcConfig", assertions.Match_ObjectLike(obj("SecurityGroupIds", []any{obj("Fn::GetAtt", []any{assertions.Match_StringLikeRegexp(jsii.String("RowSkippedSecurityGroup.*")), "GroupId"})})),
		))
		tm.HasResourceProperties(jsii.String("AWS::Lambda::Function"), obj(
			"Role", obj("Fn::GetAtt", []any{assertions.Match_StringLikeRegexp(jsii.String("ConnectionTestFunctionServiceRole.*")), "Arn"}),
			"VpcConfig", assertions.Match_ObjectLike(obj("SecurityGroupIds", []any{obj("Fn::GetAtt", []any{assertions.Match_StringLikeRegexp(jsii.String("^SecurityGroup[0-9A-F]{8}$")), "GroupId"})})),
		))
		tm.HasOutput(jsii.String("VpcId"), obj())
		tm.HasOutput(jsii.String("VpcCidr"), obj())
	}
	dpTmpl.ResourceCountIs(jsii.String("AWS::EC2::VPCEndpoint"), jsii.Number(2))
	secondDeploy.ResourceCountIs(jsii.String("AWS::EC2::VPCEndpoint"), jsii.Number(2+7))
	for _, svc := range []string{".ssm", ".sts", ".logs", ".ecr.api", ".ecr.dkr", ".sqs", ".monitoring"} {
		if s := jsonString(secondDeploy.FindResources(jsii.String("AWS::EC2::VPCEndpoint"), obj("Properties", obj("VpcEndpointType", "Interface")))); !strings.Contains(s, svc+`"`) {
			t.Errorf("no %s interface endpoint: %s", svc, s)
		}
	}
	// shop uses a customer role (IAM, 9098); billing SCRAM (9096).
	docs := jsonString(dpTmpl.FindResources(jsii.String("Custom::AWS"), nil))
	for _, want := range []string{`name: shop\\nsource:\\n  type: postgres\\n  url: ${ssm:/tributary/shop/source-url}\\ndestination:\\n  bootstrap_servers: REPLACE-ME:9098`,
		`name: billing\\nsource:\\n  type: postgres\\n  url: ${ssm:/tributary/billing/source-url}\\ndestination:\\n  bootstrap_servers: REPLACE-ME:9096`} {
		if !strings.Contains(docs, want) {
			t.Errorf("starter documents lack %q: %s", want, docs)
		}
	}
}

// TestKMSAndFunctionBudgets: -c kmsKeyArn lets the tasks and functions
// decrypt through SSM only; the connection test ends before API
// Gateway's 30 s; the row-skipped function takes one event at a time, so a
// timeout re-sends no webhook that was already delivered.
func TestKMSAndFunctionBudgets(t *testing.T) {
	stacks(t)
	redeploys(t)
	defer failOnPanic(t)
	decrypt := assertions.Match_ObjectLike(obj("Action", "kms:Decrypt", "Resource", testKMSKey,
		"Condition", obj("StringEquals", obj("kms:ViaService", obj("Fn::Join", []any{"", []any{"ssm.", obj("Ref", "AWS::Region"), ".amazonaws.com"}}))),
	))
	for _, role := range []string{"Pipelineshop.*TaskRole.*", "Pipelinebilling.*TaskRole.*", "ConnectionTestFunctionServiceRole.*", "RowSkippedFunctionServiceRole.*"} {
		secondDeploy.HasResourceProperties(jsii.String("AWS::IAM::Policy"), obj(
			"Roles", []any{obj("Ref", assertions.Match_StringLikeRegexp(jsii.String(role)))},
			"PolicyDocument", obj("Statement", assertions.Match_ArrayWith(&[]any{decrypt})),
		))
	}
	if strings.Contains(jsonString(dpTmpl.ToJSON()), "kms:Decrypt") {
		t.Error("kms:Decrypt granted without -c kmsKeyArn")
	}
	for _, tm := range []assertions.Template{dpTmpl, secondDeploy} {
		tm.AllResourcesProperties(jsii.String("AWS::Lambda::EventSourceMapping"), obj("BatchSize", 1))
		fns := tm.FindResources(jsii.String("AWS::Lambda::Function"), obj("Properties", obj(
			"Role", obj("Fn::GetAtt", []any{assertions.Match_StringLikeRegexp(jsii.String("ConnectionTestFunctionServiceRole.*")), "Arn"}),
		)))
		for id, fn := range *fns {
			if timeout := (*fn)["Properties"].(map[string]any)["Timeout"].(float64); timeout >= 30 {
				t.Errorf("%s: timeout %v s, API Gateway answers 503 at 30 s", id, timeout)
			}
		}
		if len(*fns) != 1 {
			t.Errorf("%d connection-test functions", len(*fns))
		}
	}
}

// TestAllOptionsPassNag: cdk-nag finds nothing unsuppressed with every
// option on.
func TestAllOptionsPassNag(t *testing.T) {
	redeploys(t)
	defer failOnPanic(t)
	ann := assertions.Annotations_FromStack(secondStack)
	match := assertions.Match_StringLikeRegexp(jsii.String("(AwsSolutions-|CdkNagValidationFailure).*"))
	for _, found := range []any{ann.FindError(jsii.String("*"), match), ann.FindWarning(jsii.String("*"), match)} {
		var list []struct {
			ID    string `json:"id"`
			Entry struct {
				Data string `json:"data"`
			} `json:"entry"`
		}
		json.Unmarshal([]byte(jsonString(found)), &list)
		for _, f := range list {
			t.Errorf("cdk-nag at %s: %.300s", f.ID, f.Entry.Data)
		}
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
