//go:build !linux

package sandbox_test

import "errors"

// mountAttack: bind mounts are Linux's.
func mountAttack(home, outside string, rep *agentReport) error { return errors.ErrUnsupported }

func notDumpable() {}
