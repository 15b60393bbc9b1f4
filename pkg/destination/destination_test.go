package destination

import (
	"reflect"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// TestKafkaCarriesEverySetting: every kafka.Options field is filled from
// the destination setting of the same name, so that a setting added to
// both is not silently left out of the producer.
func TestKafkaCarriesEverySetting(t *testing.T) {
	var d config.Destination
	dv := reflect.ValueOf(&d).Elem()
	ot := reflect.TypeOf(kafka.Options{})
	for i := range ot.NumField() {
		f := dv.FieldByName(ot.Field(i).Name)
		switch {
		case !f.IsValid():
		case f.Kind() == reflect.String:
			f.SetString("v-" + ot.Field(i).Name)
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		case f.CanInt():
			f.SetInt(int64(i + 1))
		}
	}
	d.PublishTimeout = "7s"
	d.TopicCreation = config.TopicCreation{Default: config.TopicDefault{Partitions: 3}}
	o := Kafka(d)
	if s := o.TopicSpec("shop.public.orders"); s.Partitions != 3 || s.ReplicationFactor != -1 || s.Field != "destination.topic_creation.default" {
		t.Errorf("TopicSpec %+v, want destination.topic_creation.default's 3 partitions", s)
	}
	ov := reflect.ValueOf(o)
	for i := range ot.NumField() {
		name, got := ot.Field(i).Name, ov.Field(i)
		if got.IsZero() {
			t.Errorf("kafka.Options.%s is not set from config.Destination", name)
		} else if f := dv.FieldByName(name); f.IsValid() && f.Type() == got.Type() && !reflect.DeepEqual(f.Interface(), got.Interface()) {
			t.Errorf("kafka.Options.%s = %v, want destination's %v", name, got.Interface(), f.Interface())
		}
	}
	if o.PublishTimeout != 7*time.Second {
		t.Errorf("PublishTimeout %s, want 7s", o.PublishTimeout)
	}
	// Unset, the documented defaults apply.
	o = Kafka(config.Destination{})
	if o.PublishTimeout <= 0 || o.MaxInFlight <= 0 || o.MaxInFlightBytes <= 0 {
		t.Errorf("defaults not applied: %+v", o)
	}
}
