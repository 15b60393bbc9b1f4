package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/jsii-runtime-go"
)

// alarmsAndDashboard watch the task's EMF metrics (README: Metrics) and
// the row-skipped queues. Every alarm notifies one SNS topic (with an
// e-mail subscription when props.AlarmEmail is set); docs/aws.md says what
// each alarm means and what to do.
func (s *DataPlaneStack) alarmsAndDashboard(stack awscdk.Stack, props *DataPlaneProps) {
	s.Alarms = awssns.NewTopic(stack, jsii.String("AlarmTopic"), &awssns.TopicProps{
		TopicName:   jsii.String(resourceName(s.deployment, "tributary-alarms")),
		DisplayName: jsii.String("Tributary alarms"),
		EnforceSSL:  jsii.Bool(true),
	})
	suppress(s.Alarms, "AwsSolutions-SNS2", "Alarm notifications carry alarm names and states, no data; CloudWatch publishes to the topic.")
	if props.AlarmEmail != "" {
		s.Alarms.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(props.AlarmEmail), nil))
	}
	action := awscloudwatchactions.NewSnsAction(s.Alarms)
	alarm := func(id string, p *awscloudwatch.AlarmProps) {
		a := awscloudwatch.NewAlarm(stack, jsii.String(id), p)
		a.AddAlarmAction(action)
		a.AddOkAction(action)
	}
	metric := func(name, pipeline, stat string, period float64, dims map[string]*string) awscloudwatch.Metric {
		d := map[string]*string{"Pipeline": jsii.String(pipeline)}
		for k, v := range dims {
			d[k] = v
		}
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String(metricsNamespace), MetricName: jsii.String(name),
			DimensionsMap: &d, Statistic: jsii.String(stat), Period: awscdk.Duration_Minutes(jsii.Number(period)),
		})
	}
	dash := awscloudwatch.NewDashboard(stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		// Dashboard names are account-wide: the region keeps two regions apart.
		DashboardName: jsii.String(resourceName(s.deployment, "tributary") + "-" + *stack.Region()),
	})
	for _, p := range props.Pipelines {
		alarm("Errors-"+p.Name, &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String("Pipeline " + p.Name + " reports errors"),
			Metric:             metric("Errors", p.Name, "Sum", 1, nil),
			Threshold:          jsii.Number(1),
			EvaluationPeriods:  jsii.Number(5),
			DatapointsToAlarm:  jsii.Number(3),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		alarm("Lag-"+p.Name, &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String("Pipeline " + p.Name + " is more than 5 minutes behind its source, or not running"),
			Metric:             metric("SourceLagSeconds", p.Name, "Maximum", 1, nil),
			Threshold:          jsii.Number(300),
			EvaluationPeriods:  jsii.Number(5),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			// No data means the task is not running: that is an alarm too.
			TreatMissingData: awscloudwatch.TreatMissingData_BREACHING,
		})
		// The lag is measured on what arrives, so a source that stops
		// sending shows lag 0: this alarm watches that rows keep coming.
		ops := map[string]awscloudwatch.IMetric{}
		var published []awscloudwatch.IMetric
		for _, op := range []string{"c", "u", "d", "r"} {
			ops[op] = metric("RowsPublished", p.Name, "Sum", float64(props.SilentMinutes), map[string]*string{"Op": jsii.String(op)})
			published = append(published, metric("RowsPublished", p.Name, "Sum", 1, map[string]*string{"Op": jsii.String(op)}))
		}
		alarm("SourceSilent-"+p.Name, &awscloudwatch.AlarmProps{
			AlarmDescription: jsii.String(fmt.Sprintf("Pipeline %s has published no row for %d minutes: its source sends nothing "+
				"(stuck replication, a dropped slot, a lost binlog connection) or the task is not running", p.Name, props.SilentMinutes)),
			Metric: awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
				Expression:   jsii.String("FILL(c,0)+FILL(u,0)+FILL(d,0)+FILL(r,0)"),
				UsingMetrics: &ops,
				Label:        jsii.String("rows published"),
				Period:       awscdk.Duration_Minutes(jsii.Number(float64(props.SilentMinutes))),
			}),
			Threshold:          jsii.Number(0),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_LESS_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_BREACHING,
		})
		// A topic that does not exist (and may not be created) holds the
		// pipeline at the row that needs it: report it as soon as it
		// happens, not only in the log.
		alarm("TopicMissing-"+p.Name, &awscloudwatch.AlarmProps{
			AlarmDescription: jsii.String("Pipeline " + p.Name + " waits for a Kafka topic that does not exist; nothing after the row that needs it is published " +
				"until the topic is created (or destination.create_missing_topics is set)"),
			Metric:             metric("TopicsMissing", p.Name, "Maximum", 1, nil),
			Threshold:          jsii.Number(1),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			// No data is a task not running: the Lag alarm reports that.
			TreatMissingData: awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		dash.AddWidgets(
			awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
				Title: jsii.String(p.Name + ": rows published per op"), Left: &published, Width: jsii.Number(12),
			}),
			awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
				Title: jsii.String(p.Name + ": lag behind the source (s)"), Width: jsii.Number(12),
				Left: &[]awscloudwatch.IMetric{metric("SourceLagSeconds", p.Name, "Maximum", 1, nil)},
			}),
			awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
				Title: jsii.String(p.Name + ": errors"), Width: jsii.Number(12),
				Left: &[]awscloudwatch.IMetric{metric("Errors", p.Name, "Sum", 1, nil)},
			}),
			awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
				Title: jsii.String(p.Name + ": source-to-publish latency (ms)"), Width: jsii.Number(12),
				Left: &[]awscloudwatch.IMetric{
					metric("SourceToPublishLatencyMs", p.Name, "p50", 1, nil),
					metric("SourceToPublishLatencyMs", p.Name, "p99", 1, nil),
				},
			}),
		)
	}
	// Skipped rows are not a task metric: each one is a row.skipped event
	// on its pipeline's queue, so the queues' counts graph them.
	skipped := []awscloudwatch.IMetric{}
	for _, p := range props.Pipelines {
		skipped = append(skipped, s.Queues[p.Name].MetricNumberOfMessagesSent(&awscloudwatch.MetricOptions{
			Label: jsii.String(p.Name + ": skipped"), Statistic: jsii.String("Sum")}))
	}
	skipped = append(skipped, s.DLQ.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Label: jsii.String("undelivered (DLQ)")}))
	dash.AddWidgets(awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
		Title: jsii.String("rows skipped (row.skipped events)"), Width: jsii.Number(24), Left: &skipped,
	}))
	alarm("RowSkippedDeadLetters", &awscloudwatch.AlarmProps{
		AlarmDescription:   jsii.String("row.skipped events could not be delivered (see the DLQ)"),
		Metric:             s.DLQ.MetricApproximateNumberOfMessagesVisible(nil),
		Threshold:          jsii.Number(1),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
	})
	// The DLQ keeps a message 14 days (SQS's maximum): this alarm fires
	// while there is still a week to redrive it.
	alarm("RowSkippedDeadLettersExpiring", &awscloudwatch.AlarmProps{
		AlarmDescription:   jsii.String("row.skipped events have waited 7 days in the DLQ; SQS deletes them after 14"),
		Metric:             s.DLQ.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Statistic: jsii.String("Maximum")}),
		Threshold:          jsii.Number(7 * 24 * 3600),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
	})
	awscdk.NewCfnOutput(stack, jsii.String("AlarmTopicArn"), &awscdk.CfnOutputProps{Value: s.Alarms.TopicArn()})
}
