//go:build !linux

package main

import "os/exec"

// setDeathSignal does nothing here: only Linux kills a child with its
// parent; the test's cleanups stop the children on every normal end.
func setDeathSignal(*exec.Cmd) {}
