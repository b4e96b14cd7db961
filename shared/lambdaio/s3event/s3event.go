// Package s3event reads and writes S3 event notifications (Amazon S3 User
// Guide, "Event message structure") in aws-lambda-go's types: the records
// of objects created, with their keys URL-decoded, and the event S3 would
// send for one object, which the dev server stands in for. It is apart
// from package lambdaio so that what uses it links no AWS SDK client.
package s3event

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// S3 sends each object's key URL-encoded as an HTML form value (a space is "+"), and aws-lambda-go decodes it into
// S3Object.URLDecodedKey — but only when the event is decoded from JSON
// (S3Object's UnmarshalJSON). A key read from S3Object.Key is still
// encoded, and an S3Event built in Go has no URLDecodedKey at all, so
// Created reads URLDecodedKey alone: an event that did not come
// through JSON names no object.

// ObjectCreatedPrefix begins the eventName of every ObjectCreated record
// ("ObjectCreated:Put", ":Copy", ":CompleteMultipartUpload", ":Post").
const ObjectCreatedPrefix = "ObjectCreated:"

// Object is one ObjectCreated record of an S3 event.
type Object struct {
	// EventName is the record's eventName ("ObjectCreated:Copy").
	EventName string
	// Bucket is the bucket's name.
	Bucket string
	// Key is the object's key, URL-decoded (URLDecodedKey); "" when the
	// record was not decoded from JSON.
	Key string
	// Size is the object's size in bytes, as the event reports it.
	Size int64
	// ETag is the object's entity tag as the event reports it (no quotes).
	ETag string
}

// Created returns the ObjectCreated records of ev in order, and the
// event names of every other record (a test event, a removal, a
// restore...), which a handler of object creations ignores.
func Created(ev events.S3Event) (created []Object, other []string) {
	for _, r := range ev.Records {
		if !strings.HasPrefix(r.EventName, ObjectCreatedPrefix) {
			other = append(other, r.EventName)
			continue
		}
		created = append(created, Object{
			EventName: r.EventName, Bucket: r.S3.Bucket.Name, Key: r.S3.Object.URLDecodedKey,
			Size: r.S3.Object.Size, ETag: r.S3.Object.ETag,
		})
	}
	return created, other
}

// EncodeKey encodes a key as S3 writes it into an event: each segment
// between slashes URL-encoded as a form value (a space becomes "+", a "+"
// becomes "%2B"), the slashes kept.
func EncodeKey(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.QueryEscape(s)
	}
	return strings.Join(segs, "/")
}

// ObjectCreated is the event S3 sends for one object created by
// name ("Copy", "Put", "CompleteMultipartUpload") in bucket in region at
// at: what a local S3 server without notifications stands in for (the dev
// server marshals it and hands the JSON to the scan gate, so the gate
// reads the key the way it reads S3's). etag is without quotes.
func ObjectCreated(name, region, bucket, key string, size int64, etag string, at time.Time) events.S3Event {
	return events.S3Event{Records: []events.S3EventRecord{{
		EventVersion: "2.1",
		EventSource:  "aws:s3",
		AWSRegion:    region,
		EventTime:    at.UTC(),
		EventName:    ObjectCreatedPrefix + name,
		PrincipalID:  events.S3UserIdentity{PrincipalID: "custody-local"},
		S3: events.S3Entity{
			SchemaVersion:   "1.0",
			ConfigurationID: "custody-local-notification",
			Bucket: events.S3Bucket{Name: bucket, OwnerIdentity: events.S3UserIdentity{PrincipalID: "custody-local"},
				Arn: "arn:aws:s3:::" + bucket},
			Object: events.S3Object{Key: EncodeKey(key), Size: size, ETag: strings.Trim(etag, `"`),
				Sequencer: fmt.Sprintf("%016X", at.UnixNano())},
		},
	}}}
}
