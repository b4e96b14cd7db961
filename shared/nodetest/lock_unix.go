//go:build unix

package nodetest

import (
	"os"
	"syscall"
)

// lockFD takes an exclusive flock on f, waiting for it; closing f
// releases it.
func lockFD(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}
