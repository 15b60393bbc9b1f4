package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// render flattens a template value into text: Ref and Fn::GetAtt become
// <id> and <id.Attr>, Fn::Join joins, so a test can read what a property
// resolves to.
func render(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		if id, ok := v["Ref"].(string); ok {
			return "<" + id + ">"
		}
		if ga, ok := v["Fn::GetAtt"].([]any); ok {
			return fmt.Sprintf("<%s.%s>", ga[0], ga[1])
		}
		if j, ok := v["Fn::Join"].([]any); ok {
			var parts []string
			for _, p := range j[1].([]any) {
				parts = append(parts, render(p))
			}
			return strings.Join(parts, j[0].(string))
		}
	}
	return jsonString(v)
}

// TestRowSkippedQueuePerPipeline: each pipeline has its own row-skipped
// queue; its task role may send to that queue only, its starter document
// and its output name it, and the function is bound to each queue by
// pipeline (ROW_SKIPPED_QUEUES), so a task cannot have another pipeline's
// webhooks signed (functions/row-skipped); the pipelines whose receivers
// may be private are the stack's list (PRIVATE_WEBHOOK_PIPELINES).
func TestRowSkippedQueuePerPipeline(t *testing.T) {
	stacks(t)
	defer failOnPanic(t)
	tmpl := templateJSON(t, dpTmpl)
	resources := tmpl["Resources"].(map[string]any)
	queues := map[string]string{} // pipeline → logical ID
	for id, r := range resources {
		r := r.(map[string]any)
		if r["Type"] != "AWS::SQS::Queue" {
			continue
		}
		if m := regexp.MustCompile(`^RowSkipped(shop|billing)[0-9A-F]{8}$`).FindStringSubmatch(id); m != nil {
			queues[m[1]] = id
			if !strings.Contains(jsonString(r), `"maxReceiveCount":5`) {
				t.Errorf("%s has no redrive to the DLQ after 5 receives: %s", id, jsonString(r))
			}
		}
	}
	if len(queues) != 2 {
		t.Fatalf("row-skipped queues %v, want one for shop and one for billing", queues)
	}

	var env, private string
	mappings := map[string]bool{}
	for id, r := range resources {
		r := r.(map[string]any)
		props, _ := r["Properties"].(map[string]any)
		switch r["Type"] {
		case "AWS::IAM::Policy":
			roles := jsonString(props["Roles"])
			for name := range queues {
				if !regexp.MustCompile(`Pipeline` + name + `.*TaskRole`).MatchString(roles) {
					continue
				}
				var sends []string
				for _, st := range props["PolicyDocument"].(map[string]any)["Statement"].([]any) {
					if strings.Contains(jsonString(st), "sqs:SendMessage") {
						sends = append(sends, render(st.(map[string]any)["Resource"]))
					}
				}
				if want := "<" + queues[name] + ".Arn>"; len(sends) != 1 || sends[0] != want {
					t.Errorf("%s's task role may send to %v, want only %s", name, sends, want)
				}
			}
		case "AWS::Lambda::Function":
			environment, _ := props["Environment"].(map[string]any)
			vars, _ := environment["Variables"].(map[string]any)
			if v, ok := vars["ROW_SKIPPED_QUEUES"]; ok {
				env = render(v)
				private = render(vars["PRIVATE_WEBHOOK_PIPELINES"])
			}
		case "AWS::Lambda::EventSourceMapping":
			src := render(props["EventSourceArn"])
			mappings[src] = true
			if props["BatchSize"] != 1.0 || jsonString(props["FunctionResponseTypes"]) != `["ReportBatchItemFailures"]` ||
				!strings.Contains(render(props["FunctionName"]), "RowSkippedFunction") {
				t.Errorf("%s: %s", id, jsonString(props))
			}
		case "Custom::AWS":
			create := render(props["Create"])
			for name, q := range queues {
				if strings.Contains(id, "Pipeline"+name) {
					if other := queues[map[string]string{"shop": "billing", "billing": "shop"}[name]]; !strings.Contains(create, "queue_url: <"+q+">") || strings.Contains(create, other) {
						t.Errorf("%s's starter document does not name its own queue: %s", name, create)
					}
				}
			}
		}
	}
	if want := "shop=<" + queues["shop"] + ".Arn>,billing=<" + queues["billing"] + ".Arn>"; env != want {
		t.Errorf("ROW_SKIPPED_QUEUES = %q, want %q", env, want)
	}
	// Only the stack opens the network to a pipeline's receiver.
	if private != "billing" {
		t.Errorf("PRIVATE_WEBHOOK_PIPELINES = %q, want billing alone", private)
	}
	if len(mappings) != 2 || !mappings["<"+queues["shop"]+".Arn>"] || !mappings["<"+queues["billing"]+".Arn>"] {
		t.Errorf("event source mappings %v, want one per pipeline queue", mappings)
	}
	outputs := tmpl["Outputs"].(map[string]any)
	for key, name := range map[string]string{"RowSkippedQueueUrlShop": "shop", "RowSkippedQueueUrlBilling": "billing"} {
		if o, ok := outputs[key].(map[string]any); !ok || render(o["Value"]) != "<"+queues[name]+">" {
			t.Errorf("output %s = %v, want the URL of %s's queue", key, outputs[key], name)
		}
	}
	if _, ok := outputs["RowSkippedQueueUrl"]; ok {
		t.Error("the shared RowSkippedQueueUrl output is still there")
	}
}
