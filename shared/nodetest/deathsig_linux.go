package nodetest

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel kill the child when this process dies, so
// an interrupted install or test leaves no npm or emulator behind.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
