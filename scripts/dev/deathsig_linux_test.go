package main

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel kill the child when the test process dies
// (a test binary killed by its timeout cannot run its cleanups).
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
