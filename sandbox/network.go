package sandbox

// Network is what was seen of an agent's use of the network.
type Network struct {
	// Observed says the agent's lookups and connections were answered and recorded by the
	// sandbox's loopback sink (LevelNet with Options.NetSink). Without it nothing of the
	// network is observed: Note says why.
	Observed bool `json:"observed"`
	// Lookups are the DNS names the agent asked for, in the order first asked.
	Lookups []string `json:"lookups"`
	// Connects are the TCP connections it attempted to the sink's ports.
	Connects []Connect `json:"connects"`
	// Dropped counts lookups and connections beyond the caps, not listed.
	Dropped int `json:"dropped,omitempty"`
	// Note says what was and was not observed.
	Note string `json:"note"`
}

// Connect is one destination the agent tried to connect to, and how often.
type Connect struct {
	// Host is the name whose (sink) address was connected to, or the address itself.
	Host  string `json:"host"`
	Port  int    `json:"port"`
	Count int    `json:"count"`
}
