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
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

const (
	testCustomerRole = "arn:aws:iam::111122223333:role/tributary-writer"
	testCluster      = "arn:aws:kafka:us-east-1:111122223333:cluster/orders/0a1b2c3d-4e5f-6789-abcd-ef0123456789-2"
	// Outputs of a data-plane stack (TaskRoleArn<Pipeline>, ConnectionTestRoleArn).
	testShopTaskRole    = "arn:aws:iam::444455556666:role/Tributary-PipelineshopTaskRole-AAAA"
	testBillingTaskRole = "arn:aws:iam::444455556666:role/Tributary-PipelinebillingTaskRole-BBBB"
	testConnTestRole    = "arn:aws:iam::444455556666:role/Tributary-ConnectionTestFunctionServiceRole-CCCC"
	// Each pipeline's external id (its /tributary/<pipeline>/external-id).
	testShopExternalID    = "shop-2f6c1e0b9a4d7c3e8f15"
	testBillingExternalID = "billing-7d0e3a9c51b2f84e6a"
)

// One app for every test: starting jsii and synthesizing is the slow part.
var (
	once      sync.Once
	dataPlane *DataPlaneStack
	customer  *CustomerAccessStack
	plainCust *CustomerAccessStack
	dpTmpl    assertions.Template
	caTmpl    assertions.Template
	caTmpl2   assertions.Template
)

func stacks(t *testing.T) {
	t.Helper()
	once.Do(func() {
		// Stand-ins for `make build-functions` and the Dockerfile.
		dir, err := os.MkdirTemp("", "tributary-cdk-")
		if err != nil {
			panic(err)
		}
		for _, f := range []string{"connection-test/bootstrap", "row-skipped/bootstrap", "backfill/bootstrap", "image/Dockerfile"} {
			p := filepath.Join(dir, f)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte("stand-in\n"), 0o755)
		}
		out := filepath.Join(dir, "cdk.out")
		if d := os.Getenv("CFN_TEMPLATES_DIR"); d != "" {
			out = d // `make test` runs cfn-lint on these templates
		}
		app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(out)})
		dataPlane = NewDataPlaneStack(app, "Tributary", &DataPlaneProps{
			Pipelines: []Pipeline{{Name: "shop", CustomerRoleARN: testCustomerRole},
				{Name: "billing", PrivateWebhook: true, Glue: &GlueRegistry{Name: "billing-schemas", Create: true}}},
			ImageDir:           filepath.Join(dir, "image"),
			ConnectionTestCode: filepath.Join(dir, "connection-test"),
			RowSkippedCode:     filepath.Join(dir, "row-skipped"),
			BackfillCode:       filepath.Join(dir, "backfill"),
		})
		customer = NewCustomerAccessStack(app, "Customer", &CustomerAccessProps{
			Writers: []Writer{
				{Pipeline: "shop", TaskRoleARN: testShopTaskRole, ExternalID: testShopExternalID},
				{Pipeline: "billing", TaskRoleARN: testBillingTaskRole, TopicPrefix: "bill", ExactlyOnce: true, ExternalID: testBillingExternalID},
			},
			ConnectionTestRoleARN: testConnTestRole,
			ClusterARN:            testCluster, CreateTopics: true,
		})
		plainCust = NewCustomerAccessStack(app, "CustomerNoCreate", &CustomerAccessProps{
			Writers:    []Writer{{Pipeline: "shop", TaskRoleARN: testShopTaskRole}},
			ExternalID: testShopExternalID, ClusterARN: testCluster,
		})
		awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
		dpTmpl = assertions.Template_FromStack(dataPlane.Stack, nil)
		caTmpl = assertions.Template_FromStack(customer.Stack, nil)
		caTmpl2 = assertions.Template_FromStack(plainCust.Stack, nil)
	})
	if dpTmpl == nil {
		t.Fatal("synthesis failed")
	}
}

func obj(kv ...any) *map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return &m
}

func TestDataPlaneResources(t *testing.T) {
	stacks(t)
	defer failOnPanic(t)
	tm := dpTmpl
	tm.ResourceCountIs(jsii.String("AWS::ECS::Service"), jsii.Number(2))
	tm.ResourceCountIs(jsii.String("AWS::ECS::Cluster"), jsii.Number(1))
	tm.ResourceCountIs(jsii.String("AWS::DynamoDB::Table"), jsii.Number(1))
	tm.ResourceCountIs(jsii.String("AWS::SQS::Queue"), jsii.Number(3)) // a row-skipped queue per pipeline, one DLQ
	tm.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Api"), jsii.Number(1))
	tm.ResourceCountIs(jsii.String("AWS::SSM::Parameter"), jsii.Number(0)) // the operator's (lifecycle_test.go)
	tm.ResourceCountIs(jsii.String("AWS::EC2::VPC"), jsii.Number(1))

	// At most one task per pipeline, stopped before its successor starts;
	// none until the operator has written a real document (a fresh deploy
	// would otherwise start a task on the starter document, which fails,
	// and the circuit breaker would roll the stack back).
	tm.AllResourcesProperties(jsii.String("AWS::ECS::Service"), obj(
		"DesiredCount", 0,
		"DeploymentConfiguration", assertions.Match_ObjectLike(obj("MinimumHealthyPercent", 0, "MaximumPercent", 100)),
	))
	// Graceful stop: the full 120 s Fargate allows; arm64; SSM document.
	tm.HasResourceProperties(jsii.String("AWS::ECS::TaskDefinition"), obj(
		"RuntimePlatform", obj("CpuArchitecture", "ARM64", "OperatingSystemFamily", "LINUX"),
		"ContainerDefinitions", []any{assertions.Match_ObjectLike(obj(
			"StopTimeout", 120,
			"Command", []any{"run", "--config", "ssm:/tributary/pipelines/shop"},
		))},
	))
	tm.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), obj(
		"BillingMode", "PAY_PER_REQUEST",
		"PointInTimeRecoverySpecification", obj("PointInTimeRecoveryEnabled", true),
		"KeySchema", []any{obj("AttributeName", "pipeline", "KeyType", "HASH")},
	))
	tm.HasResourceProperties(jsii.String("AWS::SQS::Queue"), obj(
		"RedrivePolicy", obj("maxReceiveCount", maxReceiveCount, "deadLetterTargetArn", assertions.Match_AnyValue()),
	))
	tm.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), obj(
		"FunctionResponseTypes", []any{"ReportBatchItemFailures"},
	))
}

func TestFunctionsAreGoOnGraviton(t *testing.T) {
	stacks(t)
	defer failOnPanic(t)
	fns := dpTmpl.FindResources(jsii.String("AWS::Lambda::Function"), obj("Properties", obj("Handler", "bootstrap")))
	if len(*fns) != 3 {
		t.Fatalf("%d bootstrap functions, want 3", len(*fns))
	}
	for id, fn := range *fns {
		if s := jsonString(fn); !strings.Contains(s, `"Runtime":"provided.al2023"`) || !strings.Contains(s, `"Architectures":["arm64"]`) {
			t.Errorf("%s is not provided.al2023 on arm64: %s", id, s)
		}
	}
}

func TestEveryRouteUsesIAMAuthorization(t *testing.T) {
	stacks(t)
	defer failOnPanic(t)
	routes := dpTmpl.FindResources(jsii.String("AWS::ApiGatewayV2::Route"), nil)
	if len(*routes) == 0 {
		t.Fatal("no routes")
	}
	dpTmpl.AllResourcesProperties(jsii.String("AWS::ApiGatewayV2::Route"), obj("AuthorizationType", "AWS_IAM"))
	dpTmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Route"), obj("RouteKey", "POST /pipelines/{name}/connection-test"))
	dpTmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), obj("AccessLogSettings", assertions.Match_ObjectLike(obj())))
}

func TestTaskRolePermissions(t *testing.T) {
	stacks(t)
	defer failOnPanic(t)
	// The shop task may assume the customer role; billing (no role) may not.
	dpTmpl.HasResourceProperties(jsii.String("AWS::IAM::Policy"), obj(
		"Roles", []any{obj("Ref", assertions.Match_StringLikeRegexp(jsii.String("Pipelineshop.*TaskRole.*")))},
		"PolicyDocument", obj("Statement", assertions.Match_ArrayWith(&[]any{
			assertions.Match_ObjectLike(obj("Condition", obj("ForAllValues:StringLike", obj("dynamodb:LeadingKeys", []any{"shop", "shop#checkpoint#*"})))),
			assertions.Match_ObjectLike(obj("Action", assertions.Match_ArrayWith(&[]any{"sqs:SendMessage"}))),
			assertions.Match_ObjectLike(obj("Action", "sts:AssumeRole", "Resource", testCustomerRole)),
		})),
	))
	policies := dpTmpl.FindResources(jsii.String("AWS::IAM::Policy"), obj("Properties", obj(
		"Roles", []any{obj("Ref", assertions.Match_StringLikeRegexp(jsii.String("Pipelinebilling.*TaskRole.*")))},
	)))
	for _, p := range *policies {
		if s := jsonString(p); strings.Contains(s, "sts:AssumeRole") || strings.Contains(s, "tributary/pipelines/shop") {
			t.Errorf("billing's task role reaches beyond its pipeline: %s", s)
		}
	}
}

// TestCustomerRoles: one writer role per pipeline, each trusted by its
// own task role and by the connection test's role, both with that
// pipeline's own external id (never another's: the connection test's role
// is trusted by every writer, and a document can supply only its own
// pipeline's id), and allowed its own prefix only; no CDK bootstrap needed.
func TestCustomerRoles(t *testing.T) {
	stacks(t)
	defer failOnPanic(t)
	caTmpl.ResourceCountIs(jsii.String("AWS::IAM::Role"), jsii.Number(2))
	ids := map[string]string{"shop": testShopExternalID, "billing": testBillingExternalID}
	for name, task := range map[string]string{"shop": testShopTaskRole, "billing": testBillingTaskRole} {
		ext := obj("StringEquals", obj("sts:ExternalId", ids[name]))
		caTmpl.HasResourceProperties(jsii.String("AWS::IAM::Role"), obj(
			"RoleName", "tributary-writer-"+name,
			"AssumeRolePolicyDocument", obj("Statement", []any{
				obj("Action", "sts:AssumeRole", "Effect", "Allow", "Principal", obj("AWS", task), "Condition", ext),
				obj("Action", "sts:AssumeRole", "Effect", "Allow", "Principal", obj("AWS", testConnTestRole), "Condition", ext),
			}),
		))
	}
	topics := func(prefix string) string {
		return "arn:aws:kafka:us-east-1:111122223333:topic/orders/0a1b2c3d-4e5f-6789-abcd-ef0123456789-2/" + prefix + ".*"
	}
	// Only billing is exactly_once: only its role may use transactional
	// ids (under its prefix) and read its offsets topic.
	for role, prefix := range map[string]string{"WriterShop": "shop", "WriterBilling": "bill"} {
		statements := []any{
			obj("Sid", "Cluster", "Effect", "Allow", "Resource", testCluster,
				"Action", []any{"kafka-cluster:Connect", "kafka-cluster:DescribeCluster", "kafka-cluster:WriteDataIdempotently"}),
			obj("Sid", "TopicsUnderPrefix", "Effect", "Allow", "Resource", topics(prefix),
				"Action", []any{"kafka-cluster:DescribeTopic", "kafka-cluster:DescribeTopicDynamicConfiguration", "kafka-cluster:WriteData", "kafka-cluster:CreateTopic"}),
		}
		if role == "WriterBilling" {
			statements = append(statements,
				obj("Sid", "TransactionalIdsUnderPrefix", "Effect", "Allow",
					"Resource", strings.Replace(topics(prefix), ":topic/", ":transactional-id/", 1),
					"Action", []any{"kafka-cluster:DescribeTransactionalId", "kafka-cluster:AlterTransactionalId"}),
				obj("Sid", "ReadOffsetsTopic", "Effect", "Allow", "Resource", strings.TrimSuffix(topics(prefix), "*")+"tributary-offsets",
					"Action", "kafka-cluster:ReadData"))
		}
		caTmpl.HasResourceProperties(jsii.String("AWS::IAM::Policy"), obj(
			"Roles", []any{obj("Ref", assertions.Match_StringLikeRegexp(jsii.String(role+".*")))},
			"PolicyDocument", obj("Statement", statements),
		))
	}
	roles := caTmpl.FindResources(jsii.String("AWS::IAM::Role"), nil)
	for id, r := range *roles {
		trust := jsonString((*r)["Properties"].(map[string]any)["AssumeRolePolicyDocument"])
		if strings.Contains(trust, testShopExternalID) == strings.Contains(trust, testBillingExternalID) {
			t.Errorf("%s trusts both pipelines' external ids, or neither: %s", id, trust)
		}
	}
	caTmpl.HasOutput(jsii.String("WriterRoleArnBilling"), obj())
	caTmpl2.HasResourceProperties(jsii.String("AWS::IAM::Policy"), obj(
		"PolicyDocument", obj("Statement", assertions.Match_ArrayWith(&[]any{
			obj("Sid", "TopicsUnderPrefix", "Effect", "Allow", "Resource", topics("shop"),
				"Action", []any{"kafka-cluster:DescribeTopic", "kafka-cluster:DescribeTopicDynamicConfiguration", "kafka-cluster:WriteData"}),
		})),
	))
	// Plain CloudFormation: no bootstrap version parameter or rule, no assets.
	for _, tm := range []assertions.Template{caTmpl, caTmpl2} {
		s := jsonString(tm.ToJSON())
		if strings.Contains(s, "BootstrapVersion") || strings.Contains(s, "cdk-hnb659fds") {
			t.Errorf("the customer-access template needs the CDK bootstrap stack: %s", s)
		}
	}
}

func TestTopicARN(t *testing.T) {
	for _, bad := range [][2]string{{"arn:aws:kafka:r:a:cluster/x", "p"}, {"nope", "p"}, {testCluster, ""}, {testCluster, "a*"}} {
		if _, err := topicARN(bad[0], bad[1]); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestNagFindings: cdk-nag's AWS Solutions pack finds nothing that is not
// suppressed with a reason.
func TestNagFindings(t *testing.T) {
	stacks(t)
	contextApp(t) // same-account MSK, a prebuilt image, an e-mail subscription
	defer failOnPanic(t)
	for _, st := range append([]awscdk.Stack{dataPlane.Stack, customer.Stack, plainCust.Stack}, ctxAll...) {
		ann := assertions.Annotations_FromStack(st)
		match := assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*"))
		for kind, found := range map[string]any{
			"error":   ann.FindError(jsii.String("*"), match),
			"warning": ann.FindWarning(jsii.String("*"), match),
		} {
			var list []struct {
				ID    string `json:"id"`
				Entry struct {
					Data string `json:"data"`
				} `json:"entry"`
			}
			json.Unmarshal([]byte(jsonString(found)), &list)
			for _, f := range list {
				t.Errorf("%s %s at %s: %s", *st.StackName(), kind, f.ID, f.Entry.Data)
			}
		}
	}
}

// failOnPanic turns a failed assertions.Template check (jsii panics with
// the CDK's explanation) into a test failure that shows it.
func failOnPanic(t *testing.T) {
	if r := recover(); r != nil {
		t.Fatalf("%v", r)
	}
}
