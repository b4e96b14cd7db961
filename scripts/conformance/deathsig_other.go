//go:build !linux

package main

import "os/exec"

// setDeathSignal does nothing here: only Linux kills a child with its
// parent; the runner stops its children on every normal end and on
// SIGINT/SIGTERM.
func setDeathSignal(*exec.Cmd) {}
