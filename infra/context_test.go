package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

const testImage = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/tributary:v1.2.3"

// An app built by build() from context given the way `cdk -c` gives it:
// every value a string, customerAccess as JSON text.
var (
	ctxOnce  sync.Once
	ctxApp   awscdk.App
	ctxErr   error
	ctxDP    assertions.Template
	ctxCA    assertions.Template
	ctxStack []string
	ctxAll   []awscdk.Stack
)

func contextApp(t *testing.T) {
	t.Helper()
	ctxOnce.Do(func() {
		root, err := os.MkdirTemp("", "tributary-cdk-root-")
		if err != nil {
			panic(err)
		}
		for _, f := range []string{"cdk.json", "bin/functions/connection-test/bootstrap", "bin/functions/row-skipped/bootstrap", "bin/functions/backfill/bootstrap"} {
			p := filepath.Join(root, f)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte("{}\n"), 0o755)
		}
		out := filepath.Join(root, "cdk.out")
		if d := os.Getenv("CFN_TEMPLATES_DIR"); d != "" {
			out = d // `make test` runs cfn-lint on these templates too
		}
		ctxApp = awscdk.NewApp(&awscdk.AppProps{
			Outdir: jsii.String(out),
			Context: &map[string]any{
				"pipelines":           "shop,billing",
				"deployment":          "staging",
				"mskClusterArn":       testCluster,
				"image":               testImage,
				"alarmEmail":          "ops@example.com",
				"silentMinutes":       "45",
				"connectionTestHosts": `{"shop":["*.kafka.us-east-1.amazonaws.com","shop.cluster-xyz.us-east-1.rds.amazonaws.com","10.20.0.0/16"]}`,
				"apiThrottleRate":     "2",
				"apiThrottleBurst":    "4",
				"customerAccess": `{"taskRoleArn":"arn:aws:iam::444455556666:role/staging-tributary-task-shop",` +
					`"externalId":"ext-from-cli-4f1a9c2e7b","clusterArn":"` + testCluster + `","topicPrefix":"shop","createTopics":"true","exactlyOnce":"true"}`,
			},
		})
		if ctxErr = build(ctxApp, root); ctxErr != nil {
			return
		}
		for _, st := range *ctxApp.Node().Children() {
			if s, ok := st.(awscdk.Stack); ok {
				ctxStack = append(ctxStack, *s.StackName())
				ctxAll = append(ctxAll, s)
				switch {
				case strings.HasSuffix(*s.StackName(), "-Tributary"):
					ctxDP = assertions.Template_FromStack(s, nil)
				case strings.HasSuffix(*s.StackName(), "-TributaryCustomerAccess"):
					ctxCA = assertions.Template_FromStack(s, nil)
				}
			}
		}
	})
	if ctxErr != nil {
		t.Fatal(ctxErr)
	}
}

// TestContextAsStrings: `cdk -c customerAccess='{…}'` hands the app a
// string; it must still synthesize the customer-access stack with the
// external id from the command line (it was silently skipped).
func TestContextAsStrings(t *testing.T) {
	contextApp(t)
	defer failOnPanic(t)
	if ctxCA == nil {
		t.Fatalf("no customer-access stack; stacks: %v", ctxStack)
	}
	ctxCA.HasResourceProperties(jsii.String("AWS::IAM::Role"), obj(
		"RoleName", "staging-tributary-writer-shop",
		"AssumeRolePolicyDocument", obj("Statement", []any{assertions.Match_ObjectLike(obj(
			"Condition", obj("StringEquals", obj("sts:ExternalId", "ext-from-cli-4f1a9c2e7b")),
		))}),
	))
	// createTopics given as the string "true".
	ctxCA.HasResourceProperties(jsii.String("AWS::IAM::Policy"), obj(
		"PolicyDocument", obj("Statement", assertions.Match_ArrayWith(&[]any{
			assertions.Match_ObjectLike(obj("Action", assertions.Match_ArrayWith(&[]any{"kafka-cluster:CreateTopic"}))),
		})),
	))
	// exactlyOnce given as the string "true": the transactional ids of the prefix.
	ctxCA.HasResourceProperties(jsii.String("AWS::IAM::Policy"), obj(
		"PolicyDocument", obj("Statement", assertions.Match_ArrayWith(&[]any{
			assertions.Match_ObjectLike(obj("Sid", "TransactionalIdsUnderPrefix",
				"Resource", "arn:aws:kafka:us-east-1:111122223333:transactional-id/orders/0a1b2c3d-4e5f-6789-abcd-ef0123456789-2/shop.*")),
		})),
	))
}

// TestDeploymentPrefixesNames: -c deployment=staging names the stacks and
// every account-unique resource apart from an unnamed deployment's.
func TestDeploymentPrefixesNames(t *testing.T) {
	contextApp(t)
	defer failOnPanic(t)
	want := map[string]bool{"staging-Tributary": true, "staging-TributaryCustomerAccess": true}
	for _, n := range ctxStack {
		delete(want, n)
	}
	if len(want) > 0 {
		t.Fatalf("stacks %v, missing %v", ctxStack, want)
	}
	ctxDP.HasResourceProperties(jsii.String("AWS::CloudWatch::Dashboard"), obj(
		"DashboardName", obj("Fn::Join", []any{"", []any{"staging-tributary-", obj("Ref", "AWS::Region")}})))
	ctxDP.HasResourceProperties(jsii.String("AWS::SNS::Topic"), obj("TopicName", "staging-tributary-alarms"))
	if s := jsonString(*ctxDP.FindResources(jsii.String("Custom::AWS"), nil)); !strings.Contains(s, `\"Name\":\"/tributary-staging/pipelines/shop\"`) {
		t.Errorf("no starter document at /tributary-staging/pipelines/shop: %s", s)
	}
	ctxDP.HasResourceProperties(jsii.String("AWS::ECS::TaskDefinition"), obj(
		"ContainerDefinitions", []any{assertions.Match_ObjectLike(obj(
			"Command", []any{"run", "--config", "ssm:/tributary-staging/pipelines/shop"},
		))},
	))
	ctxDP.HasResourceProperties(jsii.String("AWS::Lambda::Function"), obj(
		"Environment", obj("Variables", obj(
			"PIPELINE_PARAMETER_PREFIX", "/tributary-staging/pipelines/",
			"PIPELINE_SECRET_ROOT", "/tributary-staging/",
		)),
	))
	// Every name that must be unique in the account carries the prefix.
	for typ, prop := range map[string]string{
		"AWS::DynamoDB::Table": "TableName", "AWS::IAM::Role": "RoleName", "AWS::SNS::Topic": "TopicName",
	} {
		for id, r := range *ctxDP.FindResources(jsii.String(typ), nil) {
			props, _ := (*r)["Properties"].(map[string]any)
			if name, ok := props[prop].(string); ok && !strings.Contains(name, "staging") {
				t.Errorf("%s %s: %s %q has no deployment prefix", typ, id, prop, name)
			}
		}
	}
}

// TestSameAccountMSK: -c mskClusterArn grants each task role the
// kafka-cluster actions on the cluster and on its own topics only.
func TestSameAccountMSK(t *testing.T) {
	contextApp(t)
	defer failOnPanic(t)
	shopTopics := "arn:aws:kafka:us-east-1:111122223333:topic/orders/0a1b2c3d-4e5f-6789-abcd-ef0123456789-2/shop.*"
	ctxDP.HasResourceProperties(jsii.String("AWS::IAM::Policy"), obj(
		"Roles", []any{obj("Ref", assertions.Match_StringLikeRegexp(jsii.String("Pipelineshop.*TaskRole.*")))},
		"PolicyDocument", obj("Statement", assertions.Match_ArrayWith(&[]any{
			assertions.Match_ObjectLike(obj("Resource", testCluster,
				"Action", []any{"kafka-cluster:Connect", "kafka-cluster:DescribeCluster", "kafka-cluster:WriteDataIdempotently"})),
			assertions.Match_ObjectLike(obj("Resource", shopTopics,
				"Action", []any{"kafka-cluster:DescribeTopic", "kafka-cluster:DescribeTopicDynamicConfiguration", "kafka-cluster:WriteData", "kafka-cluster:CreateTopic"})),
		})),
	))
	for _, p := range *ctxDP.FindResources(jsii.String("AWS::IAM::Policy"), obj("Properties", obj(
		"Roles", []any{obj("Ref", assertions.Match_StringLikeRegexp(jsii.String("Pipelinebilling.*TaskRole.*")))},
	))) {
		if s := jsonString(p); strings.Contains(s, "/shop.*") {
			t.Errorf("billing's task role may write shop's topics: %s", s)
		}
	}
	// The starter document signs in with IAM on 9098, no password to write.
	if s := jsonString(*ctxDP.FindResources(jsii.String("Custom::AWS"), nil)); !strings.Contains(s, "authentication: AWS_MSK_IAM") ||
		!strings.Contains(s, "REPLACE-ME:9098") || strings.Contains(s, "kafka-password") {
		t.Errorf("starter documents do not use AWS_MSK_IAM: %s", s)
	}
}

// TestPrebuiltImage: -c image=<ECR URI> runs that image, no asset build.
func TestPrebuiltImage(t *testing.T) {
	contextApp(t)
	defer failOnPanic(t)
	if s := jsonString(*ctxDP.FindResources(jsii.String("AWS::ECS::TaskDefinition"), nil)); !strings.Contains(s, "/tributary:v1.2.3") {
		t.Errorf("task definitions do not use %s: %s", testImage, s)
	}
}

func TestBadContextIsRefused(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"bin/functions/connection-test/bootstrap", "bin/functions/row-skipped/bootstrap", "bin/functions/backfill/bootstrap"} {
		os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755)
		os.WriteFile(filepath.Join(root, f), []byte("stand-in\n"), 0o755)
	}
	for ctx, want := range map[string]string{
		`{"deployment":"Staging!"}`:                   "context deployment",
		`{"customerAccess":"{not json"}`:              "context customerAccess: want a JSON object",
		`{"customerAccess":"{\"externalId\":\"x\"}"}`: "clusterArn is missing",
		// One external id for two pipelines, too short an id, and one id
		// given to two pipelines: each would let one pipeline's document
		// (or a guess) sign in as another pipeline's writer.
		`{"customerAccess":"{\"externalId\":\"` + testShopExternalID + `\",\"clusterArn\":\"` + testCluster + `\",\"pipelines\":[{\"name\":\"shop\",\"taskRoleArn\":\"` + testShopTaskRole + `\"},{\"name\":\"billing\",\"taskRoleArn\":\"` + testBillingTaskRole + `\"}]}"}`:                                               "customerAccess.externalId: one external id shared by 2 pipelines",
		`{"customerAccess":"{\"clusterArn\":\"` + testCluster + `\",\"pipelines\":[{\"name\":\"shop\",\"taskRoleArn\":\"` + testShopTaskRole + `\",\"externalId\":\"ext-123\"}]}"}`:                                                                                                                                         "customerAccess.pipelines[0].externalId: 7 characters, want at least 16",
		`{"customerAccess":"{\"clusterArn\":\"` + testCluster + `\",\"pipelines\":[{\"name\":\"shop\",\"taskRoleArn\":\"` + testShopTaskRole + `\"}]}"}`:                                                                                                                                                                    "customerAccess.pipelines[0].externalId is missing",
		`{"customerAccess":"{\"clusterArn\":\"` + testCluster + `\",\"pipelines\":[{\"name\":\"shop\",\"taskRoleArn\":\"` + testShopTaskRole + `\",\"externalId\":\"` + testShopExternalID + `\"},{\"name\":\"billing\",\"taskRoleArn\":\"` + testBillingTaskRole + `\",\"externalId\":\"` + testShopExternalID + `\"}]}"}`: "pipelines[1].externalId: the same as pipeline shop's",
		`{"connectionTestHosts":"{\"shop\":[\"*\"]}"}`:                          `connectionTestHosts.shop[0] "*"`,
		`{"connectionTestHosts":"{\"shop\":[\"10.0.0.0/33\"]}"}`:                "not a CIDR range",
		`{"connectionTestHosts":"{\"orders\":[\"db.example.com\"]}"}`:           `connectionTestHosts: "orders" is not one of the pipelines`,
		`{"connectionTestHosts":"{\"shop\":[]}"}`:                               "connectionTestHosts.shop: want a list",
		`{"privateWebhooks":"shop,orders"}`:                                     `context privateWebhooks: "orders" is not one of the pipelines`,
		`{"glueRegistries":"{\"orders\":\"schemas\"}"}`:                         `context glueRegistries: "orders" is not one of the pipelines`,
		`{"glueRegistries":"{\"shop\":\"no spaces\"}"}`:                         `context glueRegistries.shop no spaces: want a registry name`,
		`{"glueRegistries":"{\"shop\":{\"name\":\"s\",\"create\":\"y\"}}"}`:     `context glueRegistries.shop.create y: want true or false`,
		`{"apiThrottleRate":"0"}`:                                               "context apiThrottleRate 0",
		`{"desiredCount":"-1"}`:                                                 "context desiredCount",
		`{"pipelines":"Shop"}`:                                                  "is not a pipeline name",
		`{"pipelines":"shop,pipelines"}`:                                        `context pipelines: "pipelines" is reserved`,
		`{"customerRoles":"{\"orders\":\"arn:aws:iam::111122223333:role/w\"}"}`: `customerRoles: "orders" is not one of the pipelines`,
		`{"customerRoles":"{\"shop\":\"tributary-writer\"}"}`:                   `customerRoles.shop "tributary-writer"`,
		`{"vpcCidr":"10.0.0.0/33"}`:                                             "context vpcCidr",
		`{"natGateways":"3"}`:                                                   "context natGateways 3",
		`{"taskCpu":"512","taskMemory":"8192"}`:                                 "context taskMemory 8192: with taskCpu 512",
		`{"taskCpu":"300"}`:                                                     "context taskCpu 300",
		`{"kmsKeyArn":"alias/aws/ssm"}`:                                         "context kmsKeyArn",
		`{"customerAccess":"{\"externalId\":\"x\",\"clusterArn\":\"` + testCluster + `\",\"pipelines\":[{\"name\":\"shop\",\"taskRoleArn\":\"nope\"}]}"}`: "customerAccess.pipelines[0].taskRoleArn",
		`{"customerAccess":"{\"externalId\":\"x\",\"clusterArn\":\"` + testCluster + `\",\"pipelines\":[]}"}`:                                             "customerAccess.pipelines: empty",
	} {
		var m map[string]any
		if err := jsonUnmarshal(ctx, &m); err != nil {
			t.Fatal(err)
		}
		m["image"] = testImage
		app := awscdk.NewApp(&awscdk.AppProps{Context: &m, Outdir: jsii.String(t.TempDir())})
		err := build(app, root)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("context %s: error %v, want one containing %q", ctx, err, want)
		}
	}
}
