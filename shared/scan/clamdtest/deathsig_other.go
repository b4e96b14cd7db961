//go:build !linux

package clamdtest

import "os/exec"

// setDeathSignal does nothing where the kernel has no parent-death signal;
// the test's cleanup still stops clamd.
func setDeathSignal(*exec.Cmd) {}
