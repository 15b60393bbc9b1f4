package main

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2authorizers"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecrassets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsssm"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Pipeline is one pipeline the data plane runs as its own Fargate service.
type Pipeline struct {
	// Name is the pipeline's name ([a-z0-9_-]+): its SSM document is
	// <ParameterPrefix><Name>, its checkpoint item is keyed by it.
	Name string
	// CustomerRoleARN is the role in the MSK owner's account that the task
	// assumes (AWS_MSK_IAM); empty when the pipeline does not use one.
	CustomerRoleARN string
}

// DataPlaneProps configures the data-plane stack. Asset paths are props so
// tests can synthesize with a stand-in bootstrap file and Dockerfile.
type DataPlaneProps struct {
	awscdk.StackProps
	Pipelines []Pipeline
	// ImageDir holds the Dockerfile of the task image (the repo root).
	ImageDir string
	// ConnectionTestCode and RowSkippedCode are directories holding each
	// function's `bootstrap` (linux/arm64), as `make build-functions` makes them.
	ConnectionTestCode string
	RowSkippedCode     string
	// VpcID selects an existing VPC (needs an account and region); empty
	// makes a new one.
	VpcID string
}

const (
	// parameterPrefix is where pipeline documents live; the task reads
	// <prefix><name> and secrets under /tributary/<name>/.
	parameterPrefix = "/tributary/pipelines/"
	// metricsNamespace is the CloudWatch namespace of the task's EMF metrics.
	metricsNamespace = "Tributary"
	// checkpointTable is the DynamoDB table name the pipelines default to
	// (checkpoint.table); its partition key is the pipeline name.
	checkpointTable = "tributary-checkpoints"
	// stopTimeoutSeconds is Fargate's maximum: SIGTERM, then this long to
	// flush, checkpoint and release the lease before SIGKILL.
	stopTimeoutSeconds = 120
	// maxReceiveCount is how often a row.skipped message is tried before
	// it moves to the DLQ.
	maxReceiveCount = 5
)

// DataPlaneStack is what runs pipelines in the operator's account.
type DataPlaneStack struct {
	awscdk.Stack
	Queue     awssqs.Queue
	DLQ       awssqs.Queue
	Table     awsdynamodb.Table
	Api       awsapigatewayv2.HttpApi
	TaskRoles map[string]awsiam.Role
}

// NewDataPlaneStack builds the stack.
func NewDataPlaneStack(scope constructs.Construct, id string, props *DataPlaneProps) *DataPlaneStack {
	stack := awscdk.NewStack(scope, &id, &props.StackProps)
	s := &DataPlaneStack{Stack: stack, TaskRoles: map[string]awsiam.Role{}}

	vpc := newVpc(stack, props.VpcID)
	cluster := awsecs.NewCluster(stack, jsii.String("Cluster"), &awsecs.ClusterProps{
		Vpc:                 vpc,
		ContainerInsightsV2: awsecs.ContainerInsights_ENABLED,
	})

	s.Table = awsdynamodb.NewTable(stack, jsii.String("Checkpoints"), &awsdynamodb.TableProps{
		TableName:    jsii.String(checkpointTable),
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("pipeline"), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption:    awsdynamodb.TableEncryption_AWS_MANAGED,
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})

	s.DLQ = awssqs.NewQueue(stack, jsii.String("RowSkippedDLQ"), &awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
	})
	suppress(s.DLQ, "AwsSolutions-SQS3", "This is the dead-letter queue of the row-skipped queue; it has none itself.")
	s.Queue = awssqs.NewQueue(stack, jsii.String("RowSkipped"), &awssqs.QueueProps{
		// Six times the function's timeout, as Lambda's SQS guidance asks.
		VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(12)),
		RetentionPeriod:   awscdk.Duration_Days(jsii.Number(4)),
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: s.DLQ, MaxReceiveCount: jsii.Number(maxReceiveCount)},
	})

	rowSkipped := newFunction(stack, "RowSkippedFunction", props.RowSkippedCode, vpc, 2)
	rowSkipped.AddEventSource(awslambdaeventsources.NewSqsEventSource(s.Queue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(10),
		ReportBatchItemFailures: jsii.Bool(true),
	}))
	connTest := newFunction(stack, "ConnectionTestFunction", props.ConnectionTestCode, vpc, 0.5)
	for _, fn := range []awslambda.Function{rowSkipped, connTest} {
		fn.AddToRolePolicy(readPipelineParameters(stack, "*"))
		// After the grant: a suppression covers only the children that exist.
		suppress(fn.Role(), "AwsSolutions-IAM5",
			"Reads pipeline documents under "+parameterPrefix+"* and their secrets under /tributary/*/*: one function serves every pipeline.")
	}

	s.Api = newConnectionTestApi(stack, connTest)

	logs := awslogs.NewLogGroup(stack, jsii.String("TaskLogs"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_ONE_MONTH,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	for _, p := range props.Pipelines {
		role := s.newPipelineService(stack, cluster, logs, props.ImageDir, p)
		s.TaskRoles[p.Name] = role
		if p.CustomerRoleARN != "" {
			// The connection test signs in to MSK the way the task does.
			connTest.AddToRolePolicy(assumeCustomerRole(p.CustomerRoleARN))
		}
	}
	s.alarmsAndDashboard(stack, props.Pipelines)
	awscdk.NewCfnOutput(stack, jsii.String("ConnectionTestUrl"), &awscdk.CfnOutputProps{
		Value: jsii.String(fmt.Sprintf("%spipelines/{name}/connection-test", *s.Api.Url())),
	})
	awscdk.NewCfnOutput(stack, jsii.String("RowSkippedQueueUrl"), &awscdk.CfnOutputProps{Value: s.Queue.QueueUrl()})
	return s
}

func newVpc(stack awscdk.Stack, vpcID string) awsec2.IVpc {
	if vpcID != "" {
		return awsec2.Vpc_FromLookup(stack, jsii.String("Vpc"), &awsec2.VpcLookupOptions{VpcId: jsii.String(vpcID)})
	}
	return awsec2.NewVpc(stack, jsii.String("Vpc"), &awsec2.VpcProps{
		MaxAzs:      jsii.Number(2),
		NatGateways: jsii.Number(1),
		FlowLogs: &map[string]*awsec2.FlowLogOptions{
			"All": {TrafficType: awsec2.FlowLogTrafficType_REJECT},
		},
	})
}

// newFunction is a Go function on provided.al2023, arm64, in the VPC's
// private subnets (brokers are usually private; webhooks go out by NAT).
func newFunction(stack awscdk.Stack, id, codeDir string, vpc awsec2.IVpc, timeoutMinutes float64) awslambda.Function {
	fn := awslambda.NewFunction(stack, jsii.String(id), &awslambda.FunctionProps{
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(codeDir), nil),
		MemorySize:   jsii.Number(256),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(timeoutMinutes * 60)),
		Vpc:          vpc,
		VpcSubnets:   &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS},
		Environment: &map[string]*string{
			"PIPELINE_PARAMETER_PREFIX": jsii.String(parameterPrefix),
		},
		LogGroup: awslogs.NewLogGroup(stack, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
			Retention:     awslogs.RetentionDays_ONE_MONTH,
			RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		}),
	})
	suppress(fn.Role(), "AwsSolutions-IAM4",
		"AWSLambdaBasicExecutionRole and AWSLambdaVPCAccessExecutionRole only allow writing the function's logs and managing its ENIs.")
	// W3005: the CDK lists the service role in DependsOn next to the
	// GetAtt of its ARN (with the role's default policy, which the GetAtt
	// does not cover). Redundant, harmless, and not ours to remove.
	lintIgnore(fn, "W3005")
	return fn
}

// readPipelineParameters allows reading the documents and secrets of one
// pipeline ("*" for all): its document <prefix><name> and /tributary/<name>/*.
func readPipelineParameters(stack awscdk.Stack, name string) awsiam.PolicyStatement {
	arn := func(path string) *string {
		return awscdk.Arn_Format(&awscdk.ArnComponents{
			Service: jsii.String("ssm"), Resource: jsii.String("parameter"), ResourceName: jsii.String(path),
		}, stack)
	}
	return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("ssm:GetParameter", "ssm:GetParameters"),
		Resources: &[]*string{arn(strings.TrimPrefix(parameterPrefix, "/") + name), arn("tributary/" + name + "/*")},
	})
}

func assumeCustomerRole(roleARN string) awsiam.PolicyStatement {
	return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("sts:AssumeRole"),
		Resources: jsii.Strings(roleARN),
	})
}

// newConnectionTestApi is the HTTP API: one route, IAM authorization,
// access logs.
func newConnectionTestApi(stack awscdk.Stack, fn awslambda.Function) awsapigatewayv2.HttpApi {
	api := awsapigatewayv2.NewHttpApi(stack, jsii.String("Api"), &awsapigatewayv2.HttpApiProps{
		Description:       jsii.String("Tributary: POST /pipelines/{name}/connection-test (SigV4)"),
		DefaultAuthorizer: awsapigatewayv2authorizers.NewHttpIamAuthorizer(),
	})
	api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
		Path:        jsii.String("/pipelines/{name}/connection-test"),
		Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_POST},
		Integration: awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("ConnectionTest"), fn, nil),
	})
	accessLogs := awslogs.NewLogGroup(stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_ONE_MONTH,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	stage := api.DefaultStage().Node().DefaultChild().(awsapigatewayv2.CfnStage)
	stage.SetAccessLogSettings(&awsapigatewayv2.CfnStage_AccessLogSettingsProperty{
		DestinationArn: accessLogs.LogGroupArn(),
		Format: jsii.String(`{"requestId":"$context.requestId","ip":"$context.identity.sourceIp","caller":"$context.identity.caller",` +
			`"user":"$context.identity.userArn","time":"$context.requestTime","route":"$context.routeKey","status":"$context.status"}`),
	})
	return api
}

// newPipelineService runs one pipeline: a Fargate service with exactly one
// task (the checkpoint lease allows one owner), stopped gracefully.
func (s *DataPlaneStack) newPipelineService(stack awscdk.Stack, cluster awsecs.Cluster, logs awslogs.LogGroup, imageDir string, p Pipeline) awsiam.Role {
	id := "Pipeline-" + p.Name
	role := awsiam.NewRole(stack, jsii.String(id+"-TaskRole"), &awsiam.RoleProps{
		// A fixed name, so the MSK owner can trust it before this stack exists.
		RoleName:  jsii.String("tributary-task-" + p.Name),
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("ecs-tasks.amazonaws.com"), nil),
	})
	role.AddToPolicy(readPipelineParameters(stack, p.Name))
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:DescribeTable"),
		Resources: &[]*string{s.Table.TableArn()},
		Conditions: &map[string]any{
			"ForAllValues:StringEquals": map[string]any{"dynamodb:LeadingKeys": []string{p.Name}},
		},
	}))
	s.Queue.GrantSendMessages(role)
	if p.CustomerRoleARN != "" {
		role.AddToPolicy(assumeCustomerRole(p.CustomerRoleARN))
	}
	suppress(role, "AwsSolutions-IAM5",
		"SSM access is limited to this pipeline's document and its secrets under /tributary/"+p.Name+"/*.")

	task := awsecs.NewFargateTaskDefinition(stack, jsii.String(id+"-Task"), &awsecs.FargateTaskDefinitionProps{
		Cpu:            jsii.Number(512),
		MemoryLimitMiB: jsii.Number(1024),
		TaskRole:       role,
		RuntimePlatform: &awsecs.RuntimePlatform{
			CpuArchitecture:       awsecs.CpuArchitecture_ARM64(),
			OperatingSystemFamily: awsecs.OperatingSystemFamily_LINUX(),
		},
	})
	task.AddContainer(jsii.String("tributary"), &awsecs.ContainerDefinitionOptions{
		Image: awsecs.ContainerImage_FromAsset(jsii.String(imageDir), &awsecs.AssetImageProps{
			Platform: awsecrassets.Platform_LINUX_ARM64(),
		}),
		Command:     jsii.Strings("run", "--config", "ssm:"+parameterPrefix+p.Name),
		StopTimeout: awscdk.Duration_Seconds(jsii.Number(stopTimeoutSeconds)),
		Logging: awsecs.LogDrivers_AwsLogs(&awsecs.AwsLogDriverProps{
			LogGroup:     logs,
			StreamPrefix: jsii.String(p.Name),
		}),
		Environment: &map[string]*string{"TRIBUTARY_METRICS": jsii.String("emf")},
	})
	suppress(task, "AwsSolutions-ECS2", "The only environment variable selects the metrics format; secrets come from SSM at start-up.")
	suppress(task, "AwsSolutions-IAM5", "The execution role's ECR and logs grants are the CDK's defaults for an image asset.")

	awsecs.NewFargateService(stack, jsii.String(id+"-Service"), &awsecs.FargateServiceProps{
		Cluster:        cluster,
		TaskDefinition: task,
		DesiredCount:   jsii.Number(1),
		// Stop the old task before starting a new one: one owner per pipeline.
		MinHealthyPercent: jsii.Number(0),
		MaxHealthyPercent: jsii.Number(100),
		CircuitBreaker:    &awsecs.DeploymentCircuitBreaker{Enable: jsii.Bool(true), Rollback: jsii.Bool(true)},
		VpcSubnets:        &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS},
	})

	awsssm.NewStringParameter(stack, jsii.String(id+"-Document"), &awsssm.StringParameterProps{
		ParameterName: jsii.String(parameterPrefix + p.Name),
		Description:   jsii.String("Tributary pipeline " + p.Name + ": YAML document; secrets as ${ssm:/tributary/" + p.Name + "/…} SecureStrings"),
		StringValue:   jsii.String(starterDocument(p)),
		Tier:          awsssm.ParameterTier_ADVANCED, // documents with PEM certificates pass 4 KB
	})
	return role
}

// starterDocument is the document a new pipeline gets; the operator
// replaces it (put-parameter --overwrite) before the task can run.
func starterDocument(p Pipeline) string {
	auth := "SCRAM-SHA-512\n  username: tributary\n  password: ${ssm:/tributary/" + p.Name + "/kafka-password}"
	if p.CustomerRoleARN != "" {
		auth = "AWS_MSK_IAM\n  aws_role_arn: " + p.CustomerRoleARN + "\n  external_id: ${ssm:/tributary/" + p.Name + "/external-id}"
	}
	return "name: " + p.Name + `
source:
  type: postgres
  url: ${ssm:/tributary/` + p.Name + `/source-url}
destination:
  bootstrap_servers: REPLACE-ME:9098
  topic_prefix: ` + p.Name + `
  authentication: ` + auth + `
checkpoint:
  store: dynamodb
  table: ` + checkpointTable + `
webhooks:
  queue_url: REPLACE-ME-with-the-RowSkippedQueueUrl-output
`
}

// alarmsAndDashboard watch the task's EMF metrics (README: Metrics).
func (s *DataPlaneStack) alarmsAndDashboard(stack awscdk.Stack, pipelines []Pipeline) {
	metric := func(name, pipeline, stat string, dims map[string]*string) awscloudwatch.Metric {
		d := map[string]*string{"Pipeline": jsii.String(pipeline)}
		for k, v := range dims {
			d[k] = v
		}
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String(metricsNamespace), MetricName: jsii.String(name),
			DimensionsMap: &d, Statistic: jsii.String(stat), Period: awscdk.Duration_Minutes(jsii.Number(1)),
		})
	}
	dash := awscloudwatch.NewDashboard(stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName: jsii.String("tributary"),
	})
	for _, p := range pipelines {
		awscloudwatch.NewAlarm(stack, jsii.String("Errors-"+p.Name), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String("Pipeline " + p.Name + " reports errors"),
			Metric:             metric("Errors", p.Name, "Sum", nil),
			Threshold:          jsii.Number(1),
			EvaluationPeriods:  jsii.Number(5),
			DatapointsToAlarm:  jsii.Number(3),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		awscloudwatch.NewAlarm(stack, jsii.String("Lag-"+p.Name), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String("Pipeline " + p.Name + " is more than 5 minutes behind its source"),
			Metric:             metric("SourceLagSeconds", p.Name, "Maximum", nil),
			Threshold:          jsii.Number(300),
			EvaluationPeriods:  jsii.Number(5),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			// No data means the task is not running: that is an alarm too.
			TreatMissingData: awscloudwatch.TreatMissingData_BREACHING,
		})
		var published []awscloudwatch.IMetric
		for _, op := range []string{"c", "u", "d", "r"} {
			published = append(published, metric("RowsPublished", p.Name, "Sum", map[string]*string{"Op": jsii.String(op)}))
		}
		dash.AddWidgets(
			awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
				Title: jsii.String(p.Name + ": rows published per op"), Left: &published, Width: jsii.Number(12),
			}),
			awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
				Title: jsii.String(p.Name + ": source-to-publish latency (ms)"), Width: jsii.Number(12),
				Left: &[]awscloudwatch.IMetric{
					metric("SourceToPublishLatencyMs", p.Name, "p50", nil),
					metric("SourceToPublishLatencyMs", p.Name, "p99", nil),
				},
			}),
		)
	}
	awscloudwatch.NewAlarm(stack, jsii.String("RowSkippedDeadLetters"), &awscloudwatch.AlarmProps{
		AlarmDescription:   jsii.String("row.skipped events could not be delivered (see the DLQ)"),
		Metric:             s.DLQ.MetricApproximateNumberOfMessagesVisible(nil),
		Threshold:          jsii.Number(1),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
	})
}
