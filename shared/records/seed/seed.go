// Package seed holds the fixtures Custody seeds: the demo firm every local
// server starts with, and a second, small firm for isolation tests. Both are
// committed JSON in the records.Fixture format, written by the deterministic
// generator in ./gen (go generate ./shared/records/seed) and embedded here.
//
// # The demo firm (tenant "demo", Hale & Ortiz LLP, Oakland)
//
// Principals: p_dana_whitfield (licensed attorney, CA 287114), p_sam_okafor
// (paralegal), p_priya_nair (firm administrator).
//
// Matters, all open:
//
//   - m_meridian — Meridian Logistics, Inc. v. Caldwell Freight Systems,
//     LLC (N.D. Cal., cargo loss). Team: Dana, Sam and Priya (the admin
//     manages the e-discovery vendor on this matter; it is the only team she
//     is on).
//   - m_alvarez — Rosa M. Alvarez v. Brightline Senior Living, Inc. (Alameda
//     County Superior Court, whistleblower retaliation). Team: Dana, Sam.
//   - m_harbor — Harborview Terrace Owners Association v. Castellan Builders,
//     Inc. (San Francisco Superior Court, construction defect). Team: Dana
//     and Sam, and Sam is SCREENED (ethical wall: before joining the firm
//     Sam worked on this project for the builder's prelitigation counsel).
//     Sam is on the team list on purpose, as the litigation group's default
//     staffing, so the screen is what refuses, not the team.
//
// So Dana reaches all three matters, Sam reaches m_alvarez and m_meridian,
// and Priya reaches m_meridian only.
//
// Every assertion's quote appears verbatim on the cited pages of the cited
// version (records.Fixture.Validate checks it, and so do this package's
// tests). Some facts are ungrounded (no assertions), a few are verified (a
// recorded confirmed check; one has a refuted check followed by a
// confirmed one, one only a refuted check), and some carry a model_proposal
// whose posture differs from the recorded one. Timestamps are spread from
// 2017 to October 30, 2026; no two kinds of rows share one clock.
//
// The demo has no original files: a version's sha256 is the SHA-256 of its
// chunk texts joined by a blank line ("\n\n"), which VersionText returns.
//
// # The other firm (tenant "other", Baird Kessler PC)
//
// One matter, m_northwind, whose team lists p_ines_baird and — on purpose —
// p_dana_whitfield: ids are scoped to a tenant, so a test that the demo's
// Dana cannot reach m_northwind proves the tenant boundary refuses.
package seed

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/custodymcp/custody/shared/records"
)

//go:generate go run ./gen -out .

//go:embed demo.json
var demoJSON []byte

//go:embed otherfirm.json
var otherJSON []byte

// Ids of the fixtures, for tests and the dev server.
const (
	DemoTenant    = "demo"
	DemoAttorney  = "p_dana_whitfield" // on every demo team
	DemoParalegal = "p_sam_okafor"     // on two teams, screened from Harbor
	DemoAdmin     = "p_priya_nair"     // on the Meridian team only

	Meridian = "m_meridian"
	Alvarez  = "m_alvarez"
	Harbor   = "m_harbor" // DemoParalegal is screened from it

	OtherTenant    = "other"
	OtherPrincipal = "p_ines_baird"
	Northwind      = "m_northwind" // the other firm's only matter
)

// DemoMatters lists the demo firm's matter ids, sorted.
var DemoMatters = []string{Alvarez, Harbor, Meridian}

// DemoJSON returns the demo firm's fixture as committed, in the seed format
// (records.ImportJSON imports it, or skips it after one read when done).
func DemoJSON() []byte { return demoJSON }

// Demo returns the demo firm's fixture, parsed afresh on every call (the
// caller may change it) and validated.
func Demo() (records.Fixture, error) { return load("demo.json", demoJSON) }

// OtherFirm returns the second tenant's fixture, parsed afresh and
// validated.
func OtherFirm() (records.Fixture, error) { return load("otherfirm.json", otherJSON) }

func load(name string, data []byte) (records.Fixture, error) {
	f, err := records.ParseFixture(data)
	if err == nil {
		err = f.Validate()
	}
	if err != nil {
		return records.Fixture{}, fmt.Errorf("seed %s: %w", name, err)
	}
	return f, nil
}

// VersionText is the text the demo's SHA-256 of a version is computed over:
// its chunks' texts in Seq order, joined by a blank line.
func VersionText(chunks []records.Chunk) string {
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	return strings.Join(texts, "\n\n")
}
