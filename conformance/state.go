package conformance

import (
	"fmt"
	"sort"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/report"
)

// The state checks: the session state session/new returned.
var (
	stateModesConfigSync    = &Check{ID: "state.modes-config-sync", Tier: report.TierAdvisory, Side: SideAgent, Title: "modes and the mode config option disagree", SpecRef: specConfig}
	stateLegacyModels       = &Check{ID: "state.legacy-models-not-settable", Tier: report.TierAdvisory, Side: SideAgent, Title: "Legacy models ids the model config option does not accept", SpecRef: specConfig}
	stateConfigCurrentValue = &Check{ID: "state.config-current-value", Tier: report.TierAdvisory, Side: SideAgent, Title: "Config option's current value is not one of its options", SpecRef: specConfig}
)

// statePass reads the derived session state (modes, config options, legacy models), in any
// session.
var statePass = pass{
	name:   "state",
	scope:  anyScope,
	checks: []*Check{stateModesConfigSync, stateLegacyModels, stateConfigCurrentValue},
	run:    runState,
}

// runState checks modes against the mode option, legacy models against the model option,
// current values against options.
func runState(in *inputs, out *findings) {
	r := in.Result
	seq := answerSeq(in, acp.MethodSessionNew)
	if opt := acp.ModeOption(r.ConfigOptions); opt != nil && len(r.Modes) > 0 {
		var modeIDs []string
		for _, m := range r.Modes {
			modeIDs = append(modeIDs, m.ID)
		}
		values := opt.Values()
		var diffs []string
		if opt.Current() != r.CurrentModeID {
			diffs = append(diffs, fmt.Sprintf("current mode %q vs option %s = %q", r.CurrentModeID, opt.ID, opt.Current()))
		}
		if strings.Join(sortedCopy(modeIDs), ",") != strings.Join(sortedCopy(values), ",") {
			diffs = append(diffs, fmt.Sprintf("modes [%s] vs option values [%s]", strings.Join(modeIDs, ", "), strings.Join(values, ", ")))
		}
		if len(diffs) > 0 {
			out.add(stateModesConfigSync, seq, "/result/modes", "modes and the mode config option should stay in sync: "+strings.Join(diffs, "; "), nil)
		}
	}
	if r.ModelConfig != nil && len(r.Models) > 0 {
		accepted := map[string]bool{}
		for _, v := range r.ModelConfig.Values {
			accepted[v] = true
		}
		var rejected []string
		for _, m := range r.Models {
			if !accepted[m.ID] {
				rejected = append(rejected, m.ID)
			}
		}
		if len(rejected) > 0 {
			out.add(stateLegacyModels, seq, "/result/models/availableModels",
				fmt.Sprintf("%d of %d legacy model ids are not values of config option %s, so set_config_option will not accept them: %s",
					len(rejected), len(r.Models), r.ModelConfig.ConfigID, strings.Join(rejected, ", ")), rejected)
		}
	}
	for i, o := range r.ConfigOptions {
		if o.Type != "select" || len(o.Options) == 0 {
			continue
		}
		found := false
		for _, v := range o.Values() {
			if v == o.Current() {
				found = true
			}
		}
		if !found {
			out.add(stateConfigCurrentValue, seq, fmt.Sprintf("/result/configOptions/%d/currentValue", i),
				fmt.Sprintf("config option %s has current value %s, which is not one of its options", o.ID, o.CurrentValue), nil)
		}
	}
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}
