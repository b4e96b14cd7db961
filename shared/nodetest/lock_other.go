//go:build !unix

package nodetest

import "os"

// lockFD does nothing here: without flock, installs are serialised within
// one process only.
func lockFD(*os.File) error { return nil }
