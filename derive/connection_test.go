package derive

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/report"
)

func TestDeriveModels(t *testing.T) {
	s := acp.ParseSessionResult(json.RawMessage(`{"sessionId":"s",
		"models":{"currentModelId":"gpt-5/high","availableModels":[{"modelId":"gpt-5/high","name":"GPT-5 high"},{"modelId":"gpt-5/low","name":"GPT-5 low"}]},
		"configOptions":[
			{"id":"llm","name":"Model","category":"model","type":"select","currentValue":"gpt-5","options":[{"value":"gpt-5","name":"GPT-5"},{"value":"gpt-5-mini","name":"Mini"}]},
			{"id":"reasoning_effort","name":"Effort","category":"thought_level","type":"select","currentValue":"medium","options":[{"value":"low","name":"Low"},{"value":"medium","name":"Medium"},{"value":"high","name":"High"}]}]}`))
	r := &report.Result{ConfigOptions: s.ConfigOptions}
	deriveModels(r)
	if r.ModelConfig == nil || r.ModelConfig.ConfigID != "llm" || r.ModelConfig.CurrentValue != "gpt-5" || !slices.Equal(r.ModelConfig.Values, []string{"gpt-5", "gpt-5-mini"}) {
		t.Errorf("modelConfig = %+v", r.ModelConfig)
	}
	if r.Reasoning == nil || r.Reasoning.ConfigID != "reasoning_effort" || r.Reasoning.DefaultValue != "medium" || !slices.Equal(r.Reasoning.Values, []string{"low", "medium", "high"}) {
		t.Errorf("reasoning = %+v", r.Reasoning)
	}

	// Without a model option, modelConfig and reasoning stay null.
	r = &report.Result{}
	deriveModels(r)
	if r.ModelConfig != nil || r.Reasoning != nil {
		t.Errorf("without config options: modelConfig %+v reasoning %+v", r.ModelConfig, r.Reasoning)
	}
}
