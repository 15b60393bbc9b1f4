package main

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// TestAlarmsReachSomeone: every alarm notifies the SNS topic (an alarm
// nobody hears was the old state), -c alarmEmail subscribes an address,
// and each pipeline has a "source silent" alarm, since a stuck source
// shows lag 0.
func TestAlarmsReachSomeone(t *testing.T) {
	stacks(t)
	contextApp(t)
	defer failOnPanic(t)
	for _, tm := range []assertions.Template{dpTmpl, ctxDP} {
		tm.ResourceCountIs(jsii.String("AWS::SNS::Topic"), jsii.Number(1))
		// 4 per pipeline (errors, lag, silent, topic missing) × 2 pipelines + the DLQ's two.
		tm.ResourceCountIs(jsii.String("AWS::CloudWatch::Alarm"), jsii.Number(10))
		tm.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), obj(
			"AlarmDescription", assertions.Match_StringLikeRegexp(jsii.String("Pipeline shop waits for a Kafka topic that does not exist.*")),
			"MetricName", "TopicsMissing",
			"Namespace", "Tributary",
			"Threshold", 1,
			"ComparisonOperator", "GreaterThanOrEqualToThreshold",
			"Dimensions", []any{obj("Name", "Pipeline", "Value", "shop")},
		))
		tm.AllResourcesProperties(jsii.String("AWS::CloudWatch::Alarm"), obj(
			"AlarmActions", []any{obj("Ref", assertions.Match_StringLikeRegexp(jsii.String("AlarmTopic.*")))},
			"OKActions", []any{obj("Ref", assertions.Match_StringLikeRegexp(jsii.String("AlarmTopic.*")))},
		))
		tm.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), obj(
			"AlarmDescription", assertions.Match_StringLikeRegexp(jsii.String("Pipeline shop has published no row for .* minutes.*")),
			"ComparisonOperator", "LessThanOrEqualToThreshold",
			"TreatMissingData", "breaching",
			"Metrics", assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(obj("Expression", "FILL(c,0)+FILL(u,0)+FILL(d,0)+FILL(r,0)"))}),
		))
	}
	dpTmpl.ResourceCountIs(jsii.String("AWS::SNS::Subscription"), jsii.Number(0))
	// The default window when none is given: 30 minutes.
	dpTmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), obj(
		"Metrics", assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(obj(
			"MetricStat", assertions.Match_ObjectLike(obj("Period", 1800)),
		))}),
	))
	ctxDP.HasResourceProperties(jsii.String("AWS::SNS::Subscription"), obj("Protocol", "email", "Endpoint", "ops@example.com"))
	// silentMinutes=45 in the context app: one 45-minute period.
	ctxDP.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), obj(
		"Metrics", assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(obj(
			"MetricStat", assertions.Match_ObjectLike(obj("Period", 2700)),
		))}),
	))
}

// TestDashboardGraphs: lag, errors, rows per op and skipped rows.
func TestDashboardGraphs(t *testing.T) {
	stacks(t)
	defer failOnPanic(t)
	body := jsonString(dpTmpl.FindResources(jsii.String("AWS::CloudWatch::Dashboard"), nil))
	for _, want := range []string{"shop: rows published per op", "shop: lag behind the source", "shop: errors",
		"rows skipped", "SourceLagSeconds", "NumberOfMessagesSent"} {
		if !containsString(body, want) {
			t.Errorf("dashboard lacks %s", want)
		}
	}
	dpTmpl.HasOutput(jsii.String("ServiceShop"), obj())
	dpTmpl.HasOutput(jsii.String("ClusterName"), obj())
	dpTmpl.HasOutput(jsii.String("SecurityGroupId"), obj())
}

// TestFunctionsReadOnlyDeployedPipelines: each function's role may read
// the deployed pipelines' documents and secrets by name, not every
// pipeline's (/tributary/*/*), which let one document read out another's
// secrets through the connection test.
func TestFunctionsReadOnlyDeployedPipelines(t *testing.T) {
	stacks(t)
	defer failOnPanic(t)
	for _, fn := range []string{"RowSkippedFunction", "ConnectionTestFunction"} {
		policies := dpTmpl.FindResources(jsii.String("AWS::IAM::Policy"), obj("Properties", obj(
			"Roles", []any{obj("Ref", assertions.Match_StringLikeRegexp(jsii.String(fn+"ServiceRole.*")))},
		)))
		s := jsonString(policies)
		if len(*policies) != 1 || !containsString(s, ":parameter/tributary/pipelines/shop") ||
			!containsString(s, ":parameter/tributary/billing/*") {
			t.Errorf("%s: want reads of shop's and billing's parameters: %s", fn, s)
		}
		for _, wide := range []string{"parameter/tributary/*", "parameter/tributary/pipelines/*"} {
			if containsString(s, wide+`"`) {
				t.Errorf("%s reads %s: %s", fn, wide, s)
			}
		}
	}
}
