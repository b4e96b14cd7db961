package blob

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
)

// Bucket is a bucket's role. Its name is configuration (Buckets).
type Bucket uint8

// The two buckets (docs/decisions.md "Storage").
const (
	// Staging holds uploads on their way in: incoming/ (parts assembled,
	// not yet verified), verified/ (verified and spent, watched by the
	// scanner), quarantine/ (infected, never served).
	Staging Bucket = iota + 1
	// Record holds the record's stored files under obj/.
	Record
)

func (b Bucket) String() string {
	switch b {
	case Staging:
		return "staging"
	case Record:
		return "record"
	}
	return fmt.Sprintf("Bucket(%d)", uint8(b))
}

// Key prefixes, each of one bucket.
const (
	PrefixIncoming   = "incoming/"
	PrefixVerified   = "verified/"
	PrefixQuarantine = "quarantine/"
	PrefixObject     = "obj/"
)

// IDLen is the length of an ID: 32 lowercase hex digits (128 random bits).
const IDLen = 32

// ID is the random part of a key.
type ID string

// NewID returns a fresh random ID from crypto/rand.
func NewID() ID {
	var b [IDLen / 2]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	return ID(hex.EncodeToString(b[:]))
}

// ParseID returns s as an ID, or an error wrapping ErrInvalid unless it is
// exactly IDLen lowercase hex digits.
func ParseID(s string) (ID, error) {
	if !validID(s) {
		return "", fmt.Errorf("parse blob id: %w: want %d lowercase hex digits", ErrInvalid, IDLen)
	}
	return ID(s), nil
}

func validID(s string) bool {
	if len(s) != IDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Ref addresses one object: a bucket role and a key.
type Ref struct {
	Bucket Bucket
	Key    string
}

// Incoming is where an upload is assembled: staging incoming/<id>.
func Incoming(id ID) Ref { return Ref{Bucket: Staging, Key: PrefixIncoming + string(id)} }

// Verified is where a verified, spent upload waits for its scan: staging
// verified/<id>, the only prefix the scanner watches.
func Verified(id ID) Ref { return Ref{Bucket: Staging, Key: PrefixVerified + string(id)} }

// Quarantined is where an infected upload is kept: staging quarantine/<id>.
func Quarantined(id ID) Ref { return Ref{Bucket: Staging, Key: PrefixQuarantine + string(id)} }

// Stored is a file of the record: record obj/<id>.
func Stored(id ID) Ref { return Ref{Bucket: Record, Key: PrefixObject + string(id)} }

func (r Ref) String() string { return r.Bucket.String() + "/" + r.Key }

// ID returns the key's random part ("" when the ref is not valid).
func (r Ref) ID() ID {
	if r.Validate() != nil {
		return ""
	}
	_, id, _ := strings.Cut(r.Key, "/")
	return ID(id)
}

// Validate reports an error wrapping ErrInvalid unless the key is one of
// the bucket's prefixes followed by an ID.
func (r Ref) Validate() error {
	var prefixes []string
	switch r.Bucket {
	case Staging:
		prefixes = []string{PrefixIncoming, PrefixVerified, PrefixQuarantine}
	case Record:
		prefixes = []string{PrefixObject}
	default:
		return fmt.Errorf("validate %s: %w: unknown bucket", r, ErrInvalid)
	}
	for _, p := range prefixes {
		if id, ok := strings.CutPrefix(r.Key, p); ok && validID(id) {
			return nil
		}
	}
	return fmt.Errorf("validate %s: %w: want one of %s followed by %d hex digits", r, ErrInvalid, strings.Join(prefixes, ", "), IDLen)
}

// Buckets names the two buckets. The names are configuration; nothing
// outside the engine (and the event adapters through Parse) sees them.
type Buckets struct {
	Staging string
	Record  string
}

// Name returns the name of the bucket with role b ("" for an unknown role).
func (bs Buckets) Name(b Bucket) string {
	switch b {
	case Staging:
		return bs.Staging
	case Record:
		return bs.Record
	}
	return ""
}

// Parse returns the Ref of an object named by bucket name and key, as S3
// events and EventBridge name them (the key already URL-decoded), or an
// error wrapping ErrInvalid when the bucket is neither of bs or the key is
// not one of the port's.
func (bs Buckets) Parse(bucket, key string) (Ref, error) {
	var r Ref
	switch bucket {
	case bs.Staging:
		r = Ref{Bucket: Staging, Key: key}
	case bs.Record:
		r = Ref{Bucket: Record, Key: key}
	default:
		return Ref{}, fmt.Errorf("parse object of bucket %q: %w: not a Custody bucket", bucket, ErrInvalid)
	}
	if err := r.Validate(); err != nil {
		return Ref{}, err
	}
	return r, nil
}

func (bs Buckets) validate() error {
	if bs.Staging == "" || bs.Record == "" {
		return fmt.Errorf("blob buckets: %w: both the staging and the record bucket must be named", ErrInvalid)
	}
	if bs.Staging == bs.Record {
		return fmt.Errorf("blob buckets: %w: the staging and the record bucket must differ", ErrInvalid)
	}
	return nil
}
