package main

import (
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/customresources"
	"github.com/aws/jsii-runtime-go"
)

// The pipeline documents belong to the operator, not to CloudFormation.
// An AWS::SSM::Parameter would hold the starter document as its value:
// every deploy whose context changes that value (-c customerRoles, …)
// would write the starter back over the real document, and `cdk destroy`
// would delete it. Instead a custom resource puts the starter document
// once, on create, with Overwrite false (a document that already exists
// is left alone), and does nothing on update or delete.

// createOnlyDocument puts the starter document of pipeline p at name
// unless a parameter of that name exists.
func (s *DataPlaneStack) createOnlyDocument(stack awscdk.Stack, p Pipeline, name, value string) customresources.AwsCustomResource {
	arn := awscdk.Arn_Format(&awscdk.ArnComponents{
		Service: jsii.String("ssm"), Resource: jsii.String("parameter"), ResourceName: jsii.String(strings.TrimPrefix(name, "/")),
	}, stack)
	cr := customresources.NewAwsCustomResource(stack, jsii.String("Pipeline-"+p.Name+"-StarterDocument"), &customresources.AwsCustomResourceProps{
		OnCreate: &customresources.AwsSdkCall{
			Service: jsii.String("SSM"),
			Action:  jsii.String("putParameter"),
			Parameters: map[string]any{
				"Name":        name,
				"Type":        "String",
				"Tier":        "Advanced", // documents with PEM certificates pass 4 KB
				"Overwrite":   false,
				"Description": "Tributary pipeline " + p.Name + ": YAML document; secrets as ${ssm:" + s.root + "/" + p.Name + "/…} SecureStrings",
				"Value":       value,
			},
			PhysicalResourceId: customresources.PhysicalResourceId_Of(jsii.String(name)),
			// The operator's document is already there: keep it.
			IgnoreErrorCodesMatching: jsii.String("ParameterAlreadyExists"),
		},
		// No OnUpdate, no OnDelete: after the first put the document is
		// the operator's. The custom resource's removal deletes nothing.
		Policy: customresources.AwsCustomResourcePolicy_FromSdkCalls(&customresources.SdkCallsPolicyOptions{
			Resources: &[]*string{arn},
		}),
		InstallLatestAwsSdk: jsii.Bool(false),
		LogGroup:            s.documentLogs(stack),
	})
	return cr
}

// documentLogs is the log group of the custom resources' function (one
// function serves them all), retained like the other log groups.
func (s *DataPlaneStack) documentLogs(stack awscdk.Stack) awslogs.ILogGroup {
	if s.docLogs == nil {
		s.docLogs = awslogs.NewLogGroup(stack, jsii.String("StarterDocumentLogs"), &awslogs.LogGroupProps{
			Retention:     awslogs.RetentionDays_ONE_MONTH,
			RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
		})
	}
	return s.docLogs
}

// suppressDocumentFunction records why cdk-nag's findings on the CDK's
// singleton function behind AwsCustomResource do not apply.
func suppressDocumentFunction(stack awscdk.Stack) {
	fn := stack.Node().TryFindChild(jsii.String("AWS679f53fac002430cb0da5b7982bd2287"))
	if fn == nil {
		return
	}
	suppress(fn, "AwsSolutions-IAM4", "The CDK's AwsCustomResource function: AWSLambdaBasicExecutionRole only allows writing its logs.")
	suppress(fn, "AwsSolutions-L1", "The CDK's AwsCustomResource function: its Node.js runtime is the one the CDK release ships and tests.")
	lintIgnore(fn, "W3005") // as in newFunction: the CDK's DependsOn next to the role's GetAtt
}

// starterDocument is the document a new pipeline gets; the operator
// replaces it (put-parameter --overwrite) before the task can run. The
// broker port is the one MSK listens on for the authentication used.
func starterDocument(p Pipeline, root, table, queueURL string, mskIAM bool) string {
	auth := "SCRAM-SHA-512\n  username: tributary\n  password: ${ssm:" + root + "/" + p.Name + "/kafka-password}"
	port := portSCRAM
	if mskIAM {
		auth, port = "AWS_MSK_IAM", portIAM
	}
	if p.CustomerRoleARN != "" {
		auth = "AWS_MSK_IAM\n  aws_role_arn: " + p.CustomerRoleARN + "\n  external_id: ${ssm:" + root + "/" + p.Name + "/external-id}"
		port = portIAM
	}
	return "name: " + p.Name + `
source:
  type: postgres
  url: ${ssm:` + root + `/` + p.Name + `/source-url}
destination:
  bootstrap_servers: REPLACE-ME:` + strconv.Itoa(port) + `
  topic_prefix: ` + p.Name + `
  authentication: ` + auth + `
checkpoint:
  store: dynamodb
  table: ` + table + `
webhooks:
  queue_url: ` + queueURL + `
`
}
