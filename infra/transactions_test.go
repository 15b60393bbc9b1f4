package main

import (
	"strings"
	"testing"
)

// TestExactlyOnceContext: exactlyOnce is read for all pipelines or per
// pipeline, and a value that is not a boolean is refused by name.
func TestExactlyOnceContext(t *testing.T) {
	base := func() map[string]any {
		return map[string]any{"clusterArn": testCluster, "pipelines": []any{
			map[string]any{"name": "shop", "taskRoleArn": testShopTaskRole, "exactlyOnce": true, "externalId": testShopExternalID},
			map[string]any{"name": "billing", "taskRoleArn": testBillingTaskRole, "externalId": testBillingExternalID},
		}}
	}
	props, err := customerAccessProps(base(), "")
	if err != nil {
		t.Fatal(err)
	}
	if !props.Writers[0].ExactlyOnce || props.Writers[1].ExactlyOnce {
		t.Errorf("per pipeline: %+v", props.Writers)
	}
	all := base()
	all["exactlyOnce"] = "true"
	if props, err = customerAccessProps(all, ""); err != nil || !props.Writers[1].ExactlyOnce {
		t.Errorf("for all: %v %+v", err, props)
	}
	bad := base()
	bad["pipelines"].([]any)[1].(map[string]any)["exactlyOnce"] = "yes please"
	if _, err := customerAccessProps(bad, ""); err == nil || !strings.Contains(err.Error(), `pipelines[1].exactlyOnce "yes please": want true or false`) {
		t.Errorf("bad value: %v", err)
	}
	if got, _ := transactionalIDARN(testCluster, "shop"); !strings.Contains(got, ":transactional-id/orders/") || !strings.HasSuffix(got, "/shop.*") {
		t.Errorf("transactional-id ARN %s", got)
	}
}
