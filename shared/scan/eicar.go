package scan

import "slices"

// eicarReversed is the EICAR test file's 68 characters, reversed. No file of
// the repository holds them in order: some scanners quarantine a checkout
// that does, and the repository's own test (TestNoFileHoldsTheEICARString)
// keeps it so.
const eicarReversed = `*H+H$!ELIF-TSET-SURIVITNA-DRADNATS-RACIE$}7)CC7)^P(45XZP\4[PA@%P!O5X`

// EICARLen is the length of the EICAR test string, in bytes.
const EICARLen = 68

// EICARThreat is the threat name the signature engine gives the EICAR test
// file.
const EICARThreat = "EICAR-Test-File"

// EICAR returns the EICAR Standard Anti-Virus Test File's 68 bytes
// (eicar.org), assembled at run time: a fresh copy on each call. Every
// engine's self-test scans it and must answer infected (docs/decisions.md
// "Scanning"); a clamd without signatures answers OK to everything.
func EICAR() []byte {
	b := []byte(eicarReversed)
	slices.Reverse(b)
	return b
}
