// Command gen writes the seed fixtures of package seed: demo.json (the demo
// firm, Hale & Ortiz LLP) and otherfirm.json (a second, small tenant for
// isolation tests). It is deterministic: the same source always writes the
// same bytes. Run it with `go generate ./shared/records/seed`.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/custodymcp/custody/shared/records"
)

func main() {
	out := flag.String("out", ".", "directory to write demo.json and otherfirm.json into")
	flag.Parse()
	for name, f := range map[string]records.Fixture{"demo.json": demo(), "otherfirm.json": otherFirm()} {
		if err := write(filepath.Join(*out, name), f); err != nil {
			log.Fatalf("gen: %s: %v", name, err)
		}
	}
}

func write(path string, f records.Fixture) error {
	if err := f.Normalize(time.Time{}).Validate(); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(f); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return err
	}
	chunks := 0
	for _, d := range f.Documents {
		for _, v := range d.Versions {
			chunks += len(v.Chunks)
		}
	}
	fmt.Printf("%s: %d matters, %d documents, %d chunks, %d facts, %d deadlines, %d notes, %d bytes\n",
		path, len(f.Matters), len(f.Documents), chunks, len(f.Facts), len(f.Deadlines), len(f.Notes), buf.Len())
	return nil
}

func demo() records.Fixture {
	t := records.Tenant{
		ID:   "demo",
		Name: "Hale & Ortiz LLP",
		Instructions: "Hale & Ortiz LLP is a litigation firm in Oakland, California. Cite the record: repeat a fact only with its provenance ids, " +
			"and say how far it was checked. A fact's posture is what an attorney recorded; a model proposal is not a posture. " +
			"Privileged and work-product material stays inside the firm. Nothing you do here files, serves or sends anything: " +
			"propose it, and a person at the firm decides.",
		CreatedAt: mustTime("2024-08-01T16:00:00Z"),
		UpdatedAt: mustTime("2026-09-15T18:22:47Z"),
	}
	principals := []records.Principal{
		{ID: "p_dana_whitfield", Name: "Dana Whitfield", Email: "dana.whitfield@haleortiz.example", Role: records.RoleAttorney,
			Licensed: true, BarNumber: "CA 287114", CreatedAt: mustTime("2024-08-01T16:05:00Z"), UpdatedAt: mustTime("2025-02-03T17:40:12Z")},
		{ID: "p_sam_okafor", Name: "Sam Okafor", Email: "sam.okafor@haleortiz.example", Role: records.RoleParalegal,
			CreatedAt: mustTime("2024-09-23T16:30:00Z"), UpdatedAt: mustTime("2024-09-30T20:15:09Z")},
		{ID: "p_priya_nair", Name: "Priya Nair", Email: "priya.nair@haleortiz.example", Role: records.RoleAdmin,
			CreatedAt: mustTime("2024-08-01T16:10:00Z"), UpdatedAt: mustTime("2026-01-12T19:03:55Z")},
	}
	b := newBuilder(t, principals, "p_dana_whitfield")
	for _, m := range []matterSpec{harbor(), alvarez(), meridian()} {
		if m.M.ID != "" {
			b.matter(m)
		}
	}
	return b.f
}
