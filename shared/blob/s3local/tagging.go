package s3local

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/custodymcp/custody/shared/blob"
)

// gofakes3 v1.2.0 has no object tagging: it would take PUT ?tagging for a
// PutObject and overwrite the object with the tag document. The front
// answers the tagging subresource itself and keeps each object's tag set
// as an object of its own in tagsBucket (key "<bucket>/<key>"), so tags
// persist with the objects on the folder backend. tagsBucket is not a
// valid S3 bucket name and is refused to clients (NoSuchBucket). Writes of
// tags and of the objects they belong to hold Server.tagMu, so a delete or
// an overwrite never leaves tags behind for the next object.
const tagsBucket = "_s3local_tags"

type xmlTagging struct {
	XMLName xml.Name `xml:"Tagging"`
	Tags    []xmlTag `xml:"TagSet>Tag"`
}

type xmlTag struct {
	Key   string
	Value string
}

func tagsKey(bucket, key string) string { return bucket + "/" + key }

// readTags returns the tag set of bucket/key (nil when it has none).
func (s *Server) readTags(bucket, key string) []xmlTag {
	obj, err := s.backend.GetObject(tagsBucket, tagsKey(bucket, key), nil)
	if err != nil {
		return nil
	}
	defer obj.Contents.Close()
	raw, err := io.ReadAll(obj.Contents)
	if err != nil {
		return nil
	}
	var t xmlTagging
	if xml.Unmarshal(raw, &t) != nil {
		return nil
	}
	return t.Tags
}

// writeTags replaces the tag set of bucket/key; the caller holds tagMu.
func (s *Server) writeTags(bucket, key string, tags []xmlTag) *s3Error {
	if len(tags) == 0 {
		s.deleteTags(bucket, key)
		return nil
	}
	raw, err := xml.Marshal(xmlTagging{Tags: tags})
	if err != nil {
		return errorf(http.StatusInternalServerError, "InternalError", "encode tags: %v", err)
	}
	if _, err := s.backend.PutObject(tagsBucket, tagsKey(bucket, key), map[string]string{}, bytes.NewReader(raw), int64(len(raw)), nil); err != nil {
		return errorf(http.StatusInternalServerError, "InternalError", "store tags: %v", err)
	}
	return nil
}

// deleteTags drops the tag set of bucket/key; the caller holds tagMu.
func (s *Server) deleteTags(bucket, key string) {
	_, _ = s.backend.DeleteObject(tagsBucket, tagsKey(bucket, key))
}

func (s *Server) objectExists(bucket, key string) *s3Error {
	obj, err := s.backend.HeadObject(bucket, key)
	if err != nil {
		return errNoSuchKey()
	}
	if obj.Contents != nil {
		_ = obj.Contents.Close()
	}
	return nil
}

func invalidTag(msg string) *s3Error { return errorf(http.StatusBadRequest, "InvalidTag", "%s", msg) }

// validTags holds a tag set to S3's rules.
func validTags(tags []xmlTag) *s3Error {
	if len(tags) > blob.MaxTags {
		return invalidTag("Object tags cannot be greater than 10")
	}
	seen := map[string]bool{}
	for _, t := range tags {
		switch n := utf8.RuneCountInString(t.Key); {
		case n == 0:
			return invalidTag("The TagKey you have provided is invalid")
		case n > 128:
			return invalidTag("The TagKey you have provided is too long, max 128")
		}
		if utf8.RuneCountInString(t.Value) > 256 {
			return invalidTag("The TagValue you have provided is too long, max 256")
		}
		if seen[t.Key] {
			return invalidTag("Cannot provide multiple Tags with the same key")
		}
		seen[t.Key] = true
	}
	return nil
}

func (s *Server) putObjectTagging(w http.ResponseWriter, bucket, key string, body []byte) *s3Error {
	var in xmlTagging
	if err := xml.Unmarshal(body, &in); err != nil {
		return errorf(http.StatusBadRequest, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema")
	}
	if e := validTags(in.Tags); e != nil {
		return e
	}
	s.tagMu.Lock()
	defer s.tagMu.Unlock()
	if e := s.objectExists(bucket, key); e != nil {
		return e
	}
	if e := s.writeTags(bucket, key, in.Tags); e != nil {
		return e
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) getObjectTagging(w http.ResponseWriter, bucket, key string) *s3Error {
	if e := s.objectExists(bucket, key); e != nil {
		return e
	}
	writeXML(w, http.StatusOK, struct {
		XMLName xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ Tagging"`
		Tags    []xmlTag `xml:"TagSet>Tag"`
	}{Tags: s.readTags(bucket, key)})
	return nil
}

func (s *Server) deleteObjectTagging(w http.ResponseWriter, bucket, key string) *s3Error {
	s.tagMu.Lock()
	defer s.tagMu.Unlock()
	if e := s.objectExists(bucket, key); e != nil {
		return e
	}
	s.deleteTags(bucket, key)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// tagCount sets x-amz-tagging-count on a GET or HEAD of an object with
// tags, as S3 does.
func (s *Server) tagCount(h http.Header, bucket, key string) {
	if n := len(s.readTags(bucket, key)); n > 0 {
		h.Set("x-amz-tagging-count", strconv.Itoa(n))
	}
}
