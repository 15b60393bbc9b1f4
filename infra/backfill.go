package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"
)

// backfillTimeout covers one DynamoDB write with the SDK's retries.
var backfillTimeout = awscdk.Duration_Seconds(jsii.Number(10))

// addBackfillRoute adds POST /pipelines/{name}/backfill to the API (IAM
// authorization, as every route) and its function (functions/backfill).
// The function needs no VPC, no SSM and no secret: its role may only
// dynamodb:UpdateItem the deployed pipelines' items of the checkpoint
// table, which is all a backfill request is, and in them only the
// backfill attribute (the key, pipeline, is named by every request):
// not a pipeline's position, lease or status, and no answer that would
// return them (ReturnValues).
func (s *DataPlaneStack) addBackfillRoute(stack awscdk.Stack, codeDir string, pipelines []Pipeline) awslambda.Function {
	fn := awslambda.NewFunction(stack, jsii.String("BackfillFunction"), &awslambda.FunctionProps{
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(codeDir), nil),
		MemorySize:   jsii.Number(128),
		Timeout:      backfillTimeout,
		Environment:  &map[string]*string{"CHECKPOINT_TABLE": s.Table.TableName()},
		LogGroup: awslogs.NewLogGroup(stack, jsii.String("BackfillFunctionLogs"), &awslogs.LogGroupProps{
			Retention:     awslogs.RetentionDays_ONE_MONTH,
			RemovalPolicy: awscdk.RemovalPolicy_RETAIN_ON_UPDATE_OR_DELETE,
		}),
	})
	names := make([]string, 0, len(pipelines))
	for _, p := range pipelines {
		names = append(names, p.Name)
	}
	if len(names) > 0 {
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("dynamodb:UpdateItem"),
			Resources: &[]*string{s.Table.TableArn()},
			Conditions: &map[string]any{
				"ForAllValues:StringEquals": map[string]any{
					"dynamodb:LeadingKeys": names,
					// pkg/checkpoint's names: attrPipeline, attrBackfill,
					// attrBackfillCount, attrBackfillLast.
					"dynamodb:Attributes": []string{"pipeline", "backfill", "backfill_count", "backfill_last"},
				},
				// As AWS documents attribute-level access: no request
				// that would read or return the item's other attributes.
				"StringEqualsIfExists": map[string]any{
					"dynamodb:Select":       "SPECIFIC_ATTRIBUTES",
					"dynamodb:ReturnValues": []string{"NONE", "UPDATED_OLD", "UPDATED_NEW"},
				},
			},
		}))
	}
	suppress(fn.Role(), "AwsSolutions-IAM4",
		"AWSLambdaBasicExecutionRole only allows writing the function's logs.")
	// W3005: as for the other functions (newFunction), the CDK's own DependsOn.
	lintIgnore(fn, "W3005")
	s.Api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
		Path:        jsii.String("/pipelines/{name}/backfill"),
		Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_POST},
		Integration: awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("Backfill"), fn, nil),
	})
	awscdk.NewCfnOutput(stack, jsii.String("BackfillUrl"), &awscdk.CfnOutputProps{
		Value: jsii.String(fmt.Sprintf("%spipelines/{name}/backfill", *s.Api.Url())),
	})
	return fn
}
