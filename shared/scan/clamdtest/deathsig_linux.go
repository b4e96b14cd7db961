package clamdtest

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel kill clamd when the test process dies, so
// a test binary killed outright leaves no daemon behind.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
