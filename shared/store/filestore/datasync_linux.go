package filestore

import (
	"os"
	"syscall"
)

// datasync is fdatasync(2): the file's data and what is needed to read it
// back, not its timestamps.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
