package main

import (
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// connectionTestEnv is the environment of the connection-test function.
func connectionTestEnv(t *testing.T, tm assertions.Template) map[string]any {
	t.Helper()
	fns := tm.FindResources(jsii.String("AWS::Lambda::Function"), obj("Properties", obj(
		"Role", obj("Fn::GetAtt", []any{assertions.Match_StringLikeRegexp(jsii.String("ConnectionTestFunctionServiceRole.*")), "Arn"}),
	)))
	if len(*fns) != 1 {
		t.Fatalf("%d connection-test functions, want 1", len(*fns))
	}
	for _, fn := range *fns {
		var f struct {
			Properties struct {
				Environment struct{ Variables map[string]any }
			}
		}
		if err := jsonUnmarshal(jsonString(fn), &f); err != nil {
			t.Fatal(err)
		}
		return f.Properties.Environment.Variables
	}
	return nil
}

// TestConnectionTestBoundToWriterRoles: the stack, not the document, says
// which writer role each pipeline's connection test signs in with
// (PIPELINE_WRITER_ROLES); a pipeline without one is not listed, and the
// function's role may assume only the writer roles the stack was given.
func TestConnectionTestBoundToWriterRoles(t *testing.T) {
	stacks(t)
	redeploys(t)
	defer failOnPanic(t)
	if got := connectionTestEnv(t, dpTmpl)["PIPELINE_WRITER_ROLES"]; got != "shop="+testCustomerRole {
		t.Errorf("PIPELINE_WRITER_ROLES %v, want shop=%s (billing has no writer role)", got, testCustomerRole)
	}
	if got := connectionTestEnv(t, secondDeploy)["PIPELINE_WRITER_ROLES"]; got != "shop="+testShopWriter+",billing="+testBillingWriter {
		t.Errorf("PIPELINE_WRITER_ROLES %v, want each pipeline's own writer role", got)
	}
	if _, ok := connectionTestEnv(t, firstDeploy)["PIPELINE_WRITER_ROLES"]; ok {
		t.Errorf("a stack without writer roles binds some")
	}
	policies := dpTmpl.FindResources(jsii.String("AWS::IAM::Policy"), obj("Properties", obj(
		"Roles", []any{obj("Ref", assertions.Match_StringLikeRegexp(jsii.String("ConnectionTestFunctionServiceRole.*")))},
	)))
	var doc struct {
		Properties struct {
			PolicyDocument struct {
				Statement []struct {
					Action   any
					Resource any
				}
			}
		}
	}
	assumes := 0
	for _, p := range *policies {
		if err := jsonUnmarshal(jsonString(p), &doc); err != nil {
			t.Fatal(err)
		}
		for _, st := range doc.Properties.PolicyDocument.Statement {
			if strings.Contains(jsonString(st.Action), "sts:") {
				assumes++
				if st.Action != "sts:AssumeRole" || st.Resource != testCustomerRole {
					t.Errorf("the connection test may %v on %v, want sts:AssumeRole on %s only", st.Action, st.Resource, testCustomerRole)
				}
			}
		}
	}
	if assumes != 1 {
		t.Errorf("%d sts statements on the connection test's role, want 1", assumes)
	}
}

// TestConnectionTestHosts: -c connectionTestHosts reaches the function
// as PIPELINE_ALLOWED_HOSTS; without it the variable is absent (any host).
func TestConnectionTestHosts(t *testing.T) {
	stacks(t)
	contextApp(t)
	defer failOnPanic(t)
	want := `{"shop":["*.kafka.us-east-1.amazonaws.com","shop.cluster-xyz.us-east-1.rds.amazonaws.com","10.20.0.0/16"]}`
	if got := connectionTestEnv(t, ctxDP)["PIPELINE_ALLOWED_HOSTS"]; got != want {
		t.Errorf("PIPELINE_ALLOWED_HOSTS %v, want %s", got, want)
	}
	if got, ok := connectionTestEnv(t, dpTmpl)["PIPELINE_ALLOWED_HOSTS"]; ok {
		t.Errorf("PIPELINE_ALLOWED_HOSTS %v without connectionTestHosts", got)
	}
}

// TestApiStageThrottled: each route of the API is throttled, all callers together,
// 5 requests a second with bursts of 10 unless the context says otherwise.
func TestApiStageThrottled(t *testing.T) {
	stacks(t)
	contextApp(t)
	defer failOnPanic(t)
	dpTmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), obj(
		"DefaultRouteSettings", obj("ThrottlingRateLimit", 5, "ThrottlingBurstLimit", 10)))
	ctxDP.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), obj(
		"DefaultRouteSettings", obj("ThrottlingRateLimit", 2, "ThrottlingBurstLimit", 4)))
	// What callers' per-pipeline execute-api:Invoke grants name.
	dpTmpl.HasOutput(jsii.String("ApiId"), obj("Value", obj("Ref", assertions.Match_StringLikeRegexp(jsii.String("Api.*")))))
}
