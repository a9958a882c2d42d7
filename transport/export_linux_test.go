package transport

// DisableCgroups turns the agents' cgroups off for this process (before its first launch):
// the tests of the degraded path run so.
func DisableCgroups() { noCgroups = true }

// CgroupsAvailable says whether this process's agents get a cgroup of their own, and why not
// (it starts the watchdog, which makes the run's cgroup).
func CgroupsAvailable() (bool, string) {
	_ = StartWatchdog()
	r := runCgroup()
	return r.dir != "", r.why
}
