package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/uploads"
)

// sampleCase is what one sample of events/scangate is and does: the
// engine the function runs, the object id the sample names (put in place
// of the id of a real upload the test deposits), the file deposited, and
// the state the upload must have after the sample ran through the
// function's handler.
type sampleCase struct {
	engine   string
	sampleID string // "" for a sample that names no upload's object
	body     []byte
	want     uploads.State
}

var memo = []byte("Minutes of the 3 March hearing: the motion to compel is set for argument.\n")

var sampleCases = map[string]sampleCase{
	"s3-object-created.json":       {EngineSignature, "5d0c7a2e9b1f4c3a8e6d2b0f1a9c7e35", memo, uploads.StateInReview},
	"s3-escaped-key.json":          {EngineSignature, "7e4a91c3d5b2f0e8a6c4b2d0f9e7c5a3", memo, uploads.StateInReview},
	"s3-plus-key.json":             {EngineSignature, "", memo, uploads.StateScanPending},
	"s3-wrong-prefix.json":         {EngineSignature, "9c1e3a5b7d9f1b3d5f7a9c1e3b5d7f90", memo, uploads.StateScanPending},
	"guardduty-no-threats.json":    {EngineGuardDuty, "3f9a1c7e5b2d4e6f8a0b1c2d3e4f5a6b", memo, uploads.StateInReview},
	"guardduty-threats-found.json": {EngineGuardDuty, "a1b2c3d4e5f60718293a4b5c6d7e8f90", memo, uploads.StateInfected},
	"guardduty-unsupported.json":   {EngineGuardDuty, "0f1e2d3c4b5a69788796a5b4c3d2e1f0", memo, uploads.StateScanFailed},
	// The function's schedule: a pass of the intake duty, which leaves an
	// upload still waiting for its verdict alone.
	"schedule-intake-sweep.json": {EngineSignature, "", memo, uploads.StateScanPending},
}

// Every sample is in kebab-case, has its case above, and decodes as
// aws-lambda-go's type for its source with no field unknown or dropped:
// encoding the decoded event again gives the file's fields (an S3 event
// gains only the urlDecodedKey and empty versionId aws-lambda-go writes).
func TestSampleEventsDecode(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(sampleDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in %s (%v)", sampleDir, err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			if _, ok := sampleCases[name]; !ok {
				t.Errorf("%s has no case in sampleCases: add it", name)
			}
			if base := strings.TrimSuffix(name, ".json"); base != strings.ToLower(base) || strings.ContainsAny(base, "_ ") {
				t.Errorf("%s is not kebab-case (events/<function>/<source>-<case>.json)", name)
			}
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var ev any = &events.CloudWatchEvent{}
			if strings.HasPrefix(name, "s3-") {
				ev = &events.S3Event{}
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(ev); err != nil {
				t.Fatalf("decode: %v", err)
			}
			again, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(fields(t, raw), withoutLibraryFields(fields(t, again))); diff != "" {
				t.Errorf("fields of the file (-) and of the decoded event (+):\n%s", diff)
			}
		})
	}
}

func fields(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// withoutLibraryFields drops what aws-lambda-go writes of an S3 object
// that S3 does not send for an unversioned bucket: the urlDecodedKey it
// computes, and an empty versionId.
func withoutLibraryFields(v any) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "urlDecodedKey")
		if x["versionId"] == "" {
			delete(x, "versionId")
		}
		for k, e := range x {
			x[k] = withoutLibraryFields(e)
		}
	case []any:
		for i, e := range x {
			x[i] = withoutLibraryFields(e)
		}
	}
	return v
}

// Every sample runs through the function's handler, composed as main
// composes it, against the DynamoDB emulator and the local S3 server, each
// naming the object of a real upload: the upload ends in the sample's
// state.
func TestSamplesRunThroughTheHandler(t *testing.T) {
	for name, c := range sampleCases {
		t.Run(name, func(t *testing.T) {
			emu := startEmulators(t, c.engine)
			g, err := newGate(testAWSConfig(), emu.config(t, c.engine), discard())
			if err != nil {
				t.Fatal(err)
			}
			u := emu.deposit(t, "memo.txt", c.body)
			var raw []byte
			switch {
			case c.sampleID == "":
				raw, err = os.ReadFile(filepath.Join(sampleDir, name))
				if err != nil {
					t.Fatal(err)
				}
			case c.engine == EngineGuardDuty:
				raw = sample(t, name, c.sampleID, u, emu.etag(t, u))
			default:
				raw = sample(t, name, c.sampleID, u, "")
			}
			if err := g.Handle(context.Background(), raw); err != nil {
				t.Fatalf("Handle = %v", err)
			}
			got := emu.upload(t, u.ID)
			if got.State != c.want {
				t.Errorf("upload %s after the sample = %s, want %s", u.ID, got.State, c.want)
			}
			if c.want == uploads.StateInReview {
				// The function's intake (issue 18) made its document,
				// pending review, with the memo's text.
				it, err := emu.Store.Get(context.Background(), records.DocumentKey(u.Tenant, u.Matter, got.DocumentID))
				var d records.Document
				if err != nil || records.DecodeRow(it, &d) != nil || d.ReviewState != records.ReviewPending || d.Kind != "upload" {
					t.Errorf("document %q of the clean upload = %+v, %v; want one pending review", got.DocumentID, d, err)
				}
			}
		})
	}
}

// The escaped key is "verified%2F<hex>": only its URL-decoded form names
// the object, so an implementation reading the raw key would find nothing.
// The plus key's two records decode outside the lane's alphabet ("+" to a
// space, "%2B" to "+").
func TestSampleKeysAreReadURLDecoded(t *testing.T) {
	tests := []struct {
		file     string
		raw      []string
		decoded  []string
		verified []bool
	}{
		{"s3-escaped-key.json", []string{"verified%2F7e4a91c3d5b2f0e8a6c4b2d0f9e7c5a3"},
			[]string{"verified/7e4a91c3d5b2f0e8a6c4b2d0f9e7c5a3"}, []bool{true}},
		{"s3-plus-key.json",
			[]string{"verified/2b6d8f0a1c3e5b7d9f1a3c5e7b9d1f3+", "verified/2b6d8f0a1c3e5b7d9f1a3c5e7b9d1f3%2B"},
			[]string{"verified/2b6d8f0a1c3e5b7d9f1a3c5e7b9d1f3 ", "verified/2b6d8f0a1c3e5b7d9f1a3c5e7b9d1f3+"}, []bool{false, false}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(sampleDir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var ev events.S3Event
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatal(err)
			}
			var gotRaw, gotDecoded []string
			var gotVerified []bool
			for _, r := range ev.Records {
				gotRaw, gotDecoded = append(gotRaw, r.S3.Object.Key), append(gotDecoded, r.S3.Object.URLDecodedKey)
				_, rawErr := sampleBuckets.Parse(r.S3.Bucket.Name, r.S3.Object.Key)
				ref, err := sampleBuckets.Parse(r.S3.Bucket.Name, r.S3.Object.URLDecodedKey)
				if rawErr == nil {
					t.Errorf("the raw key %q parses as an object of the lane: the sample does not test the decoding", r.S3.Object.Key)
				}
				gotVerified = append(gotVerified, err == nil && strings.HasPrefix(ref.Key, blob.PrefixVerified))
			}
			if diff := cmp.Diff([][]string{tc.raw, tc.decoded}, [][]string{gotRaw, gotDecoded}); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			if !cmp.Equal(gotVerified, tc.verified) {
				t.Errorf("verified/ objects of the lane: %v, want %v", gotVerified, tc.verified)
			}
		})
	}
}

// The EICAR file, assembled at run time and named brief.pdf, runs through
// the object-created sample: infected, and quarantined.
func TestTheEICARFileThroughTheObjectCreatedSampleIsQuarantined(t *testing.T) {
	emu := startEmulators(t, EngineSignature)
	g, err := newGate(testAWSConfig(), emu.config(t, EngineSignature), discard())
	if err != nil {
		t.Fatal(err)
	}
	u := emu.deposit(t, "brief.pdf", scan.EICAR())
	if err := g.Handle(context.Background(), sample(t, "s3-object-created.json", sampleCases["s3-object-created.json"].sampleID, u, "")); err != nil {
		t.Fatal(err)
	}
	if got := emu.upload(t, u.ID); got.State != uploads.StateInfected {
		t.Errorf("state = %s, want infected", got.State)
	}
	if _, err := emu.Blob.HeadObject(context.Background(), blob.Quarantined(u.Object)); err != nil {
		t.Errorf("quarantine/%s: %v", u.Object, err)
	}
}
