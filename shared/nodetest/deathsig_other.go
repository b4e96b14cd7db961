//go:build !linux

package nodetest

import "os/exec"

// setDeathSignal does nothing here: only Linux kills a child with its
// parent; the child is stopped by its context on every normal end.
func setDeathSignal(*exec.Cmd) {}
