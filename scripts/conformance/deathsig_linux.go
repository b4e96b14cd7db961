package main

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel kill the child when this process dies, so
// a runner killed outright leaves no server or suite behind.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
