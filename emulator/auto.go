package emulator

import "strings"

// Auto is the backend of an agent no profile is written for: the emulator answers every
// dialect it speaks on one port (each recorded request says which it was), and the agent gets
// every base-URL and dummy-key variable the other profiles know (AutoEnv). It is the dialect of
// the generic profile "auto" (--backend auto); Dialects lists wire formats only.
const Auto Dialect = "auto"

// AutoEnv is what the auto profile gives an agent, computed from the other profiles: the
// embedded profiles/auto.json is checked against it, so that it cannot drift from them.
type AutoEnv struct {
	// Env are the variables some profile points at the emulator (a value that holds
	// {{baseURL}} or {{dummyKey}}), each with its value; a variable set to different values
	// takes the value most profiles give it (the first in order on a tie).
	Env map[string]string
	// EmptyEnv are the variables some profile wants unset or empty and Env does not set, in
	// order.
	EmptyEnv []string
	// Conflicts are the variables of Env the profiles treat differently, by name.
	Conflicts []EnvConflict
}

// EnvConflict is a variable of AutoEnv.Env that the profiles do not all treat the same way:
// set to different values, or set by some and wanted empty by others (who point their agent
// at the emulator otherwise, by a file, and keep the variable from sending it elsewhere).
type EnvConflict struct {
	Name string
	// Values maps each value given to the profiles that give it, by name.
	Values map[string][]string
	// Emptied are the profiles that want it empty, by name.
	Emptied []string
}

// AutoEnv computes the auto profile's environment from every profile of the set but the auto
// profile itself.
func (s *Profiles) AutoEnv() AutoEnv {
	setters := map[string]map[string][]string{} // variable -> value -> profiles
	emptied := map[string][]string{}            // variable -> profiles
	for _, p := range s.list {
		if p.Dialect == Auto {
			continue
		}
		for name, v := range p.Env {
			if strings.Contains(v, "{{baseURL}}") || strings.Contains(v, "{{dummyKey}}") {
				if setters[name] == nil {
					setters[name] = map[string][]string{}
				}
				setters[name][v] = append(setters[name][v], p.Name)
			}
		}
		for _, name := range p.EmptyEnv {
			emptied[name] = append(emptied[name], p.Name)
		}
	}
	a := AutoEnv{Env: map[string]string{}}
	for _, name := range sortedKeys(setters) {
		values := setters[name]
		best := ""
		for _, v := range sortedKeys(values) {
			if best == "" || len(values[v]) > len(values[best]) {
				best = v
			}
		}
		a.Env[name] = best
		if len(values) > 1 || len(emptied[name]) > 0 {
			a.Conflicts = append(a.Conflicts, EnvConflict{Name: name, Values: values, Emptied: emptied[name]})
		}
	}
	for _, name := range sortedKeys(emptied) {
		if _, set := a.Env[name]; !set {
			a.EmptyEnv = append(a.EmptyEnv, name)
		}
	}
	return a
}
