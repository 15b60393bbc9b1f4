// Command infra is Tributary's AWS CDK app: the data-plane stack (one
// Fargate service per pipeline, checkpoints, SSM documents, the row-skipped
// queue and function, the connection-test API, alarms) and, when its
// context is given, the customer-access stack for the MSK owner's account.
// `make synth` runs it offline into cdk.out/; `cdk deploy` runs it through
// cdk.json.
//
// Context (cdk.json or -c):
//
//	pipelines            comma-separated pipeline names (default "shop")
//	customerRoleArn      role in the MSK account the tasks assume (optional)
//	vpcId                an existing VPC (default: a new one)
//	customerAccess       {"taskRoleArn","externalId","clusterArn","topicPrefix","createTopics"}
//	                     synthesizes TributaryCustomerAccess too
//	assets               directory of the function builds (default ../bin/functions)
package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

func main() {
	defer jsii.Close()
	props := &awscdk.AppProps{}
	if os.Getenv("CDK_CONTEXT_JSON") == "" { // run directly (make synth), not by the cdk CLI
		props.Context = contextFromCdkJSON("../cdk.json")
	}
	app := awscdk.NewApp(props)
	build(app)
	app.Synth(nil)
}

// build adds the stacks that the app's context asks for, with cdk-nag's
// AWS Solutions checks.
func build(app awscdk.App) {
	ctx := func(key string) string {
		if v, ok := app.Node().TryGetContext(jsii.String(key)).(string); ok {
			return v
		}
		return ""
	}
	env := &awscdk.Environment{
		Account: jsii.String(os.Getenv("CDK_DEFAULT_ACCOUNT")),
		Region:  jsii.String(os.Getenv("CDK_DEFAULT_REGION")),
	}
	stackProps := awscdk.StackProps{}
	if ctx("vpcId") != "" {
		stackProps.Env = env // a VPC lookup needs both
	}
	names := ctx("pipelines")
	if names == "" {
		names = "shop"
	}
	var pipelines []Pipeline
	for _, n := range strings.Split(names, ",") {
		if n = strings.TrimSpace(n); n != "" {
			pipelines = append(pipelines, Pipeline{Name: n, CustomerRoleARN: ctx("customerRoleArn")})
		}
	}
	assets := ctx("assets")
	if assets == "" {
		assets = "../bin/functions"
	}
	NewDataPlaneStack(app, "Tributary", &DataPlaneProps{
		StackProps:         stackProps,
		Pipelines:          pipelines,
		ImageDir:           "..",
		ConnectionTestCode: filepath.Join(assets, "connection-test"),
		RowSkippedCode:     filepath.Join(assets, "row-skipped"),
		VpcID:              ctx("vpcId"),
	})

	if ca, ok := app.Node().TryGetContext(jsii.String("customerAccess")).(map[string]any); ok {
		str := func(k string) string { s, _ := ca[k].(string); return s }
		create, _ := ca["createTopics"].(bool)
		NewCustomerAccessStack(app, "TributaryCustomerAccess", &CustomerAccessProps{
			TaskRoleARN:  str("taskRoleArn"),
			ExternalID:   str("externalId"),
			ClusterARN:   str("clusterArn"),
			TopicPrefix:  str("topicPrefix"),
			CreateTopics: create,
		})
	}
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
}

// contextFromCdkJSON reads the "context" object of cdk.json, which only the
// cdk CLI passes to an app on its own.
func contextFromCdkJSON(path string) *map[string]any {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var doc struct {
		Context map[string]any `json:"context"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	return &doc.Context
}
