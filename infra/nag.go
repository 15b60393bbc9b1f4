package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// suppress records why a cdk-nag rule does not apply to c (and what c
// holds); every suppression in this app carries its reason.
func suppress(c constructs.IConstruct, rule, reason string) {
	cdknag.NagSuppressions_AddResourceSuppressions(c, &[]*cdknag.NagPackSuppression{
		{Id: jsii.String(rule), Reason: jsii.String(reason)},
	}, jsii.Bool(true))
}

// lintIgnore tells cfn-lint (`make test` runs it on every template) to skip
// rules on c's CloudFormation resource only; the caller says why in a
// comment, as with suppress.
func lintIgnore(c constructs.IConstruct, rules ...string) {
	c.Node().DefaultChild().(awscdk.CfnResource).AddMetadata(jsii.String("cfn-lint"),
		map[string]any{"config": map[string]any{"ignore_checks": rules}})
}
