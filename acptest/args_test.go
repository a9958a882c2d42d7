package acptest

import (
	"reflect"
	"testing"
)

// Args and Main's flags stay in step: every model fault set renders as a flag that reads
// back into the same Config.
func TestModelFaultArgs(t *testing.T) {
	var all ModelFaults
	for _, f := range modelFlags(&all) {
		*f.on = true
	}
	cfg := Config{Persona: "model", ModelFaults: all}
	got, _, err := parseArgs(cfg.Args())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, cfg) {
		t.Errorf("Args %q read back as %+v, want %+v", cfg.Args(), got, cfg)
	}
	v := reflect.ValueOf(all)
	for i := range v.NumField() {
		if !v.Field(i).Bool() {
			t.Errorf("ModelFaults.%s has no flag", v.Type().Field(i).Name)
		}
	}
}
