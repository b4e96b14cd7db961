package main

import (
	"strings"

	"github.com/custodymcp/custody/shared/records"
)

// Harborview Terrace v. Castellan Builders: a construction-defect case under
// California's Right to Repair Act. Windows on two elevations were installed
// without sill pans; the architect flagged it during construction; the
// builder's superintendent let the cladding go on anyway. The paralegal is
// screened: before joining the firm the paralegal worked on this project for the
// builder's prelitigation counsel.

const (
	hbrPlaintiff = "Harborview Terrace Owners Association"
	hbrDefendant = "Castellan Builders, Inc."
	hbrCounsel   = "Hale & Ortiz LLP (counsel for the Association)"
	hbrArchitect = "Lund Moreno Architects (non-party)"
)

var hbrSpec = `LUND MORENO ARCHITECTS — HARBORVIEW TERRACE
SECTION 08 51 13 — ALUMINUM WINDOWS. Revision 1, November 20, 2017 (Bulletin 4).

PART 1 — GENERAL. 1.4 Performance: windows shall resist water penetration at a test pressure of 6.24 psf when tested under ASTM E1105 after installation. 1.6 Submittals: installation details for sill, jamb and head at each wall type.

PART 2 — PRODUCTS. 2.1 Windows: thermally broken aluminum, AAMA/WDMA/CSA 101/I.S.2/A440 performance class AW. 2.3 Sill pans: preformed or site-fabricated sloped sill pan flashing of stainless steel or self-adhered membrane, with end dams and a back dam.

PART 3 — EXECUTION. 3.2 Installation: install each window over a sloped sill pan flashing with end dams and a back dam, turned up at jambs not less than 4 inches. Lap the sill pan over the weather-resistive barrier below and lap the weather-resistive barrier above over the head flashing, shingle fashion.

3.3 Do not install any window until the sill pan at that opening has been inspected and accepted by the Contractor. 3.5 Field quality control: test one window in twenty for water penetration under ASTM E1105, including at least two windows on each of the west and south elevations.

END OF SECTION 08 51 13.`

var hbrSpecRev0 = strings.NewReplacer(
	"Revision 1, November 20, 2017 (Bulletin 4).", "Revision 0, September 5, 2017 (Permit Set).",
	"2.3 Sill pans: preformed or site-fabricated sloped sill pan flashing of stainless steel or self-adhered membrane, with end dams and a back dam.", "2.3 Flashing: as recommended by the window manufacturer.",
	"3.2 Installation: install each window over a sloped sill pan flashing with end dams and a back dam, turned up at jambs not less than 4 inches. Lap the sill pan over the weather-resistive barrier below and lap the weather-resistive barrier above over the head flashing, shingle fashion.",
	"3.2 Installation: install each window over a sill pan flashing as recommended by the window manufacturer.",
	"3.3 Do not install any window until the sill pan at that opening has been inspected and accepted by the Contractor. 3.5 Field quality control: test one window in twenty for water penetration under ASTM E1105, including at least two windows on each of the west and south elevations.",
	"3.5 Field quality control: test windows for water penetration as directed by the Architect.",
).Replace(hbrSpec)

func harbor() matterSpec {
	m := records.Matter{
		ID:               "m_harbor",
		Name:             "Harborview Terrace v. Castellan",
		Caption:          "Harborview Terrace Owners Association v. Castellan Builders, Inc.",
		Court:            "Superior Court of California, County of San Francisco (Complex Litigation, Department 613)",
		DocketNumber:     "CGC-24-619482",
		Client:           hbrPlaintiff,
		ClientRole:       "plaintiff",
		PracticeArea:     "Construction defect: Right to Repair Act (Civ. Code § 895 et seq.), water intrusion",
		Status:           records.MatterOpen,
		Team:             []string{"p_dana_whitfield", "p_sam_okafor"},
		Screened:         []string{"p_sam_okafor"},
		ScreenReason:     "A member of the firm's staff worked on this project for the builder's prelitigation counsel before joining the firm. Screened at intake on September 30, 2024 (In re Complex Asbestos Litigation (1991) 232 Cal.App.3d 572); written notice of the screen sent to opposing counsel.",
		SourceDocumentID: "d_hbr_complaint",
		OpenedOn:         "2024-09-30",
		CreatedAt:        mustTime("2024-09-30T20:48:17Z"),
		UpdatedAt:        mustTime("2024-09-30T21:03:52Z"),
	}
	return matterSpec{
		M: m, Plaintiff: hbrPlaintiff, Defendant: hbrDefendant,
		Pleadings: hbrPleadings(),
		Docs:      hbrDocs(),
		Facts:     hbrFacts(),
		Deadlines: hbrDeadlines(),
		Notes:     hbrNotes(),
	}
}

func hbrPleadings() pleadingSpec {
	return pleadingSpec{
		Complaint: docSpec{ID: "d_hbr_complaint", Title: "Complaint for Violation of the Right to Repair Act, Breach of Implied Warranty and Negligence",
			Kind: "complaint", Class: pleading, Party: hbrPlaintiff, Priv: none, Author: "Dana Whitfield, Hale & Ortiz LLP",
			Custodian: "Hale & Ortiz LLP", Date: "2024-10-15", Pages: 14, Checked: "2024-10-17T18:42:33Z"},
		Head: []string{
			"HALE & ORTIZ LLP\nDana Whitfield (SBN 287114)\n1999 Harrison Street, Suite 1800, Oakland, California 94612\nAttorneys for Plaintiff Harborview Terrace Owners Association\nSUPERIOR COURT OF CALIFORNIA, COUNTY OF SAN FRANCISCO",
			"HARBORVIEW TERRACE OWNERS ASSOCIATION, a California nonprofit mutual benefit corporation, Plaintiff, v. CASTELLAN BUILDERS, INC., a California corporation; and DOES 1 through 50, Defendants. Case No. CGC-24-619482. COMPLAINT FOR: (1) VIOLATION OF THE RIGHT TO REPAIR ACT, CIVIL CODE § 895 ET SEQ.; (2) BREACH OF IMPLIED WARRANTY; (3) NEGLIGENCE.",
		},
		Items: []allegation{
			{Heading: "PARTIES", Text: "Plaintiff Harborview Terrace Owners Association (the \"Association\") is a California nonprofit mutual benefit corporation and the homeowners association for Harborview Terrace, a 48-unit residential condominium at 2150 Third Street, San Francisco, California (the \"Project\")."},
			{Text: "The Association has standing under Civil Code section 945 and Code of Civil Procedure section 383 to sue for damage to the common areas and to the separate interests it is obligated to maintain."},
			{Text: "Defendant Castellan Builders, Inc. (\"Castellan\") is a California corporation that developed the Project, acted as its general contractor, and sold its units to the public."},
			{Heading: "VENUE", Text: "Venue is proper in San Francisco County because the Project is located in this county."},
			{Heading: "GENERAL ALLEGATIONS", Text: "The City and County of San Francisco issued a certificate of final completion and occupancy for the Project on August 15, 2019."},
			{Text: "The Project's architectural specifications required each window to be installed over a sloped sill pan flashing with end dams, lapped shingle-fashion with the weather-resistive barrier."},
			{Text: "Castellan and its window subcontractor installed windows on the west and south elevations without sill pan flashing."},
			{Text: "At many windows, the weather-resistive barrier was lapped in reverse, so that water running down the wall was directed behind the barrier rather than over it."},
			{Text: "Beginning in the winter of 2021, owners of units on the west and south elevations reported water entering at window corners during rain."},
			{Text: "In 2023 the Association retained Kestrel Building Sciences to investigate the leaks."},
			{Text: "Destructive testing by Kestrel confirmed that water enters the wall assembly at the window sills and has caused decay of wood framing and sheathing."},
			{Text: "On November 2, 2023, the Association served Castellan with a notice of claim under Civil Code section 910."},
			{Text: "Castellan acknowledged receipt of the notice on November 30, 2023 and inspected the Project on January 17 and 18, 2024."},
			{Text: "On March 8, 2024, Castellan offered to repair windows in only six of the 31 units in which the Association had reported leaks."},
			{Text: "Castellan's offer did not address the missing sill pans or the reversed laps at any other window of the Project."},
			{Text: "The Association rejected Castellan's offer of repair on April 5, 2024, stating its reasons in writing."},
			{Text: "The reasonable cost of repairing the window defects and the resulting damage is not less than $3,480,000."},
			{Heading: "FIRST CAUSE OF ACTION (Violation of the Right to Repair Act, Civil Code § 895 et seq.)", Text: "The Association incorporates paragraphs 1 through 17."},
			{Text: "The Project's windows and their flashing violate the functionality standard of Civil Code section 896, subdivision (a)(2), which requires that windows and their systems not allow water to pass beyond, around or through them or their designed or actual moisture barriers."},
			{Text: "The violations have caused damage to the Project's common areas, including wall framing and sheathing."},
			{Heading: "SECOND CAUSE OF ACTION (Breach of Implied Warranty)", Text: "The Association incorporates paragraphs 1 through 20."},
			{Text: "Castellan impliedly warranted that the Project was built in a good and workmanlike manner and was fit for its intended purpose."},
			{Heading: "THIRD CAUSE OF ACTION (Negligence)", Text: "The Association incorporates paragraphs 1 through 22."},
			{Text: "Castellan's superintendent knew in September 2018 that windows on the west elevation were being installed without sill pans and did not stop or correct the installation."},
		},
		Tail: []string{
			"PRAYER FOR RELIEF\nThe Association prays for judgment against Castellan for: (a) the reasonable cost of repairing the violations and the resulting damage, according to proof and not less than $3,480,000; (b) the reasonable cost of relocating owners during repairs under Civil Code section 944; (c) investigative costs; (d) prejudgment interest; (e) costs of suit; and (f) such other relief as the Court finds just.",
			"Dated: October 15, 2024. HALE & ORTIZ LLP, By: /s/ Dana Whitfield, Attorneys for Plaintiff Harborview Terrace Owners Association.",
		},
		// Castellan answered the unverified complaint with a general denial
		// (Code Civ. Proc. § 431.30(d)): no paragraph-by-paragraph responses.
		Answer: docSpec{ID: "d_hbr_answer", Title: "Castellan Builders, Inc.'s Answer to Complaint (General Denial) and Affirmative Defenses",
			Kind: "answer", Class: pleading, Party: hbrDefendant, Priv: none, Author: "Carla Abernathy, Abernathy Stone LLP",
			Custodian: "Hale & Ortiz LLP", Date: "2024-12-06", Pages: 6},
		AnswerHead: []string{
			"ABERNATHY STONE LLP\nCarla Abernathy (SBN 201736)\n275 Battery Street, Suite 2100, San Francisco, California 94111\nAttorneys for Defendant Castellan Builders, Inc.\nSUPERIOR COURT OF CALIFORNIA, COUNTY OF SAN FRANCISCO. Case No. CGC-24-619482.",
			"GENERAL DENIAL\nUnder Code of Civil Procedure section 431.30(d), Castellan Builders, Inc. (\"Castellan\") generally denies each and every allegation of the unverified Complaint, and further denies that the Association has been damaged in any sum.",
		},
		AnswerTail: []string{
			"AFFIRMATIVE DEFENSES\nFIRST AFFIRMATIVE DEFENSE (Failure to Maintain, Civil Code § 945.5(c)). Any damage was caused by the Association's failure to follow the maintenance recommendations provided to it, including the recommended five-year maintenance of exterior window sealant. SECOND AFFIRMATIVE DEFENSE (Unreasonable Rejection of Offer to Repair, Civil Code § 934). The Association unreasonably rejected Castellan's offer to repair.",
			"THIRD AFFIRMATIVE DEFENSE (Acts of Others). Any defect was caused by persons other than Castellan, including its window subcontractor and owners who altered their units. FOURTH AFFIRMATIVE DEFENSE (Offset). Any recovery must be reduced by amounts received from others for the same damage.",
			"Castellan prays that the Association take nothing, and for costs of suit. Dated: December 6, 2024. ABERNATHY STONE LLP, By: /s/ Carla Abernathy.",
		},
	}
}

func hbrDocs() []docSpec {
	return []docSpec{
		{ID: "d_hbr_notice", Title: "Notice of Claim under Civil Code Section 910 (November 2, 2023)", Kind: "letter", Class: corresp,
			Party: hbrPlaintiff, Priv: none, Author: "Margaret Chen, President", Custodian: "Harborview Terrace Owners Association", Date: "2023-11-02", Pages: 4,
			Body: `NOTICE OF CLAIM UNDER CIVIL CODE SECTION 910
From: Harborview Terrace Owners Association, 2150 Third Street, San Francisco, CA 94107. To: Castellan Builders, Inc., at its address designated under Civil Code section 912(b). Date: November 2, 2023. Sent by certified mail.

The Association gives notice of violations of the standards of Civil Code section 896 at the Project. Owners of 31 units on the west and south elevations have reported water entering at window corners and sills during rain since the winter of 2021.

The claimed violations are: (a) water intrusion at and around the windows of those units, in violation of section 896(a)(2); (b) resulting damage to interior finishes and, on information and belief, to wall framing. The Association's consultant, Kestrel Building Sciences, has observed staining and elevated moisture readings below 19 of those windows.

The Association requests that Castellan acknowledge this notice within fourteen days as required by Civil Code section 913, and preserve all plans, specifications, subcontracts and field reports for the Project. /s/ Margaret Chen, President, Board of Directors.`},
		{ID: "d_hbr_offer", Title: "Castellan's Offer to Repair under Civil Code Section 917 (March 8, 2024)", Kind: "letter", Class: corresp,
			Party: hbrDefendant, Priv: none, Author: "Henrik Lindqvist, Lindqvist Barr LLP", Custodian: "Harborview Terrace Owners Association", Date: "2024-03-08", Pages: 3,
			Checked: "2024-10-08T17:55:20Z",
			Body: `LINDQVIST BARR LLP
March 8, 2024
Harborview Terrace Owners Association, Attn: Board of Directors
Re: Harborview Terrace — Offer to Repair under Civil Code Section 917

On behalf of Castellan Builders, Inc., and following its inspection of the Project on January 17 and 18, 2024, Castellan offers to repair the window leaks in Units 302, 304, 405, 407, 506 and 602, by removing and reinstalling the affected windows with new sealant and flashing tape, at no cost to the Association.

Castellan's inspection did not find evidence of a construction defect at other units. Staining at other windows is consistent with deferred maintenance of exterior sealant, which the Association's maintenance manual calls for at five-year intervals. Castellan does not offer to repair those units.

Under Civil Code section 918, the Association has thirty days to accept this offer or to request the names of up to three alternative contractors. Very truly yours, Henrik Lindqvist, for Castellan Builders, Inc.`},
		{ID: "d_hbr_subcontract", Title: "Window Subcontract: Castellan Builders and Pacific Glazing Systems (February 12, 2018)", Kind: "contract", Class: document,
			Party: hbrDefendant + " and Pacific Glazing Systems, Inc.", Priv: none, Author: "Castellan Builders, Inc.", Custodian: "Castellan Builders, Inc. (produced CBI-002210)", Date: "2018-02-12", Pages: 12,
			Body: `SUBCONTRACT AGREEMENT
Project: Harborview Terrace, 2150 Third Street, San Francisco. Contractor: Castellan Builders, Inc. Subcontractor: Pacific Glazing Systems, Inc. Date: February 12, 2018. Subcontract sum: $1,146,000.

ARTICLE 2 — SCOPE. Subcontractor shall furnish and install all aluminum windows and storefront, including sill pan flashing, head flashing and perimeter sealant, complete and watertight, in accordance with the Contract Documents, including Specification Section 08 51 13.

ARTICLE 5 — SUPERVISION AND INSPECTION. Contractor's superintendent shall inspect each window opening before Subcontractor installs the window and shall not release an elevation for cladding until Contractor has accepted the window installation on that elevation.

ARTICLE 9 — WARRANTY. Subcontractor warrants its work to be free of defects in materials and workmanship for ten (10) years from substantial completion of the Project and shall repair any water leakage through or around its work at its own cost.

ARTICLE 11 — INDEMNITY. To the fullest extent permitted by law, Subcontractor shall defend and indemnify Contractor against claims arising out of Subcontractor's work, including claims under Civil Code sections 895 through 945.5, except to the extent caused by Contractor's active negligence.

Signed: Castellan Builders, Inc. By /s/ Robert Castellan, President. Pacific Glazing Systems, Inc. By /s/ Ana Ruiz, Vice President.`},
		{ID: "d_hbr_spec", Title: "Specification Section 08 51 13 — Aluminum Windows", Kind: "specification", Class: document,
			Party: hbrArchitect, Priv: none, Author: "Lund Moreno Architects", Custodian: "Castellan Builders, Inc. (produced CBI-000877)", Date: "2017-11-20", Pages: 8,
			Body: hbrSpec, Comment: "Revision 1 (Bulletin 4)",
			Prior: []priorSpec{{Date: "2017-09-05", Pages: 7, Body: hbrSpecRev0, Comment: "Revision 0 (Permit Set)"}}},
		{ID: "d_hbr_field_report", Title: "Architect's Field Observation Report No. 14 (September 20, 2018)", Kind: "field_report", Class: document,
			Party: hbrArchitect, Priv: none, Author: "Ingrid Lund", Custodian: "Lund Moreno Architects (subpoenaed)", Date: "2018-09-20", Pages: 3,
			Checked: "2025-04-14T20:27:01Z",
			Body: `LUND MORENO ARCHITECTS — FIELD OBSERVATION REPORT NO. 14
Project: Harborview Terrace. Date of visit: September 20, 2018. Present: Dale Renner (Castellan, superintendent); Luis Ortega (Pacific Glazing, foreman); Ingrid Lund (architect).

Observed: windows installed at levels 3 and 4 of the west elevation without sill pans. At several openings the weather-resistive barrier below the sill is lapped over the sill flashing tape rather than under it. This is not in accordance with Section 08 51 13, paragraph 3.2.

Action required: Contractor to remove windows at affected openings, install sill pans per detail 7/A5.12, and correct the barrier laps before cladding. Contractor to confirm corrective work in writing before the next site visit. Distribution: Castellan Builders, Inc.; Pacific Glazing Systems, Inc.; Owner's representative.`},
		{ID: "d_hbr_leak_log", Title: "Owner Maintenance Requests: Water (Extract, November 2021 – August 2023)", Kind: "log", Class: document,
			Party: hbrPlaintiff, Priv: none, Author: "Bayfront Community Management", Custodian: "Harborview Terrace Owners Association", Date: "2023-09-08", Pages: 5,
			Body: `HARBORVIEW TERRACE — OWNER MAINTENANCE REQUESTS: WATER (EXTRACT)
Prepared by Bayfront Community Management from the owner portal. Period: November 2021 through August 2023. 52 water-related requests from 31 units.

2021-11-09 Unit 405 (west): water on sill and floor below bedroom window after overnight rain. 2021-12-14 Unit 302 (west): water dripping from window corner, lower left; stained baseboard. 2022-01-03 Unit 506 (south): bubbling paint below living room window.

2022-12-27 Unit 602 (south): water running down inside face of wall below window during storm; carpet wet. 2023-01-10 Units 304, 407, 503, 505 (west and south): water at windows during atmospheric river storms.

2023-03-21 Unit 207 (west): musty odor and dark staining at baseboard below window; owner reports the condition began in 2022. 2023-08-02 Unit 402 (south): window sill soft to the touch.

Summary: requests came from 31 of the 48 units, all on the west and south elevations. No water-related requests came from units on the north and east elevations.`},
		{ID: "d_hbr_minutes", Title: "Minutes of the Board of Directors (September 14, 2023)", Kind: "minutes", Class: document,
			Party: hbrPlaintiff, Priv: none, Author: "Kira Holt, Bayfront Community Management", Custodian: "Harborview Terrace Owners Association", Date: "2023-09-14", Pages: 3,
			Body: `HARBORVIEW TERRACE OWNERS ASSOCIATION — MINUTES OF THE REGULAR MEETING OF THE BOARD OF DIRECTORS
September 14, 2023, 7:00 p.m., Community Room. Present: Margaret Chen (President), Tomas Alvarado, Rachel Ng, Devon Pierce, Lucia Ferrante. Management: Kira Holt, Bayfront Community Management.

Window leaks: Management reported 52 water-related requests from 31 units since November 2021. Kestrel Building Sciences presented its preliminary survey: elevated moisture readings below 19 windows on the west and south elevations, consistent with water entering at the sills.

Resolved, by unanimous vote, to serve a notice of claim on Castellan Builders, Inc. under Civil Code section 910 and to authorize Kestrel to perform destructive testing at up to six locations. Resolved to defer the 2024 exterior sealant maintenance pending the investigation.`},
		{ID: "d_hbr_kestrel", Title: "Water Intrusion Investigation Report (Kestrel Building Sciences)", Kind: "expert_report", Class: expert,
			Party: hbrPlaintiff + " (expert Miriam Kowalski, P.E.)", Priv: none, Author: "Miriam Kowalski, P.E., Kestrel Building Sciences", Custodian: "Hale & Ortiz LLP", Date: "2025-06-30", Pages: 24,
			Checked: "2025-07-02T18:14:55Z",
			Body: `KESTREL BUILDING SCIENCES — WATER INTRUSION INVESTIGATION REPORT
Harborview Terrace, 2150 Third Street, San Francisco. Prepared for Hale & Ortiz LLP, counsel for Harborview Terrace Owners Association. Principal investigator: Miriam Kowalski, P.E. June 30, 2025.

SCOPE. We performed water testing under ASTM E1105 at 14 windows and destructive openings at 10 windows between February 3 and March 14, 2025: nine on the west and south elevations and one comparison opening on the north elevation. We reviewed the plans, Specification Section 08 51 13, the window subcontract and the architect's field reports.

FINDING 1: None of the nine windows opened on the west and south elevations had a sill pan flashing. At seven of the nine, the weather-resistive barrier below the sill was lapped over the sill flashing tape in reverse shingle fashion. The comparison opening on the north elevation had a sill pan installed as specified.

FINDING 2: Twelve of the fourteen windows tested leaked at the lower corners at test pressures of 2.86 psf or less, well below the specified 6.24 psf. Both windows that passed were on the north elevation.

FINDING 3: At six of the nine openings, wood sheathing and studs below the sill showed decay, with moisture content above 28 percent. Decay extended up to 18 inches below the sill at Unit 302.

FINDING 4: Window perimeter sealant was intact and adhered at every window we examined. Sealant condition does not explain the leaks: water enters below the sealant line, at the sill, where the missing sill pans leave no path to drain water to the exterior.

OPINION: The leaks are caused by the omission of sill pan flashing and the reversed laps of the weather-resistive barrier, contrary to Specification Section 08 51 13, paragraph 3.2. Because the condition is systemic on the west and south elevations, repair requires removing and reinstalling all 212 windows on those elevations with sill pans and corrected laps, and replacing decayed framing and sheathing.

I declare that the foregoing represents my professional opinions to a reasonable degree of engineering certainty. /s/ Miriam Kowalski, P.E., Principal, Kestrel Building Sciences.`},
		{ID: "d_hbr_estimate", Title: "Repair Cost Estimate (Bayline Restoration, July 15, 2025)", Kind: "estimate", Class: document,
			Party: hbrPlaintiff, Priv: none, Author: "Bayline Restoration, Inc.", Custodian: "Hale & Ortiz LLP", Date: "2025-07-15", Pages: 6,
			Body: `BAYLINE RESTORATION, INC. — REPAIR COST ESTIMATE
Project: Harborview Terrace window remediation, west and south elevations. Based on the Kestrel Building Sciences repair scope of June 30, 2025. Date: July 15, 2025.

Remove and reinstall 212 windows with new sill pans, flashing and barrier: $1,908,000. Framing and sheathing repair (allowance, 40 percent of openings): $412,000. Scaffolding and weather protection, 7 months: $386,000.

Interior finish repair at 31 units: $248,000. Owner relocation allowance during work: $186,000. General conditions, permits and contractor fee: $340,000.

TOTAL ESTIMATED REPAIR COST: $3,480,000. Exclusions: hazardous materials, unforeseen structural repairs beyond the allowance, and Association management costs. Estimate valid for 90 days.`},
		{ID: "d_hbr_depo_renner", Title: "Deposition of Dale Renner (Excerpts)", Kind: "deposition_transcript", Class: deposition,
			Party: hbrDefendant + " (witness Dale Renner)", Priv: none, Author: "Priscilla Obi, CSR No. 14022", Custodian: "Hale & Ortiz LLP", Date: "2026-01-22", Pages: 20,
			Body: `DEPOSITION OF DALE RENNER — EXCERPTS
Taken January 22, 2026, at the offices of Hale & Ortiz LLP, Oakland, California. Examination by Dana Whitfield for Plaintiff; Carla Abernathy defending Castellan Builders, Inc. Reported by Priscilla Obi, CSR No. 14022.

Q. You were Castellan's superintendent on Harborview Terrace from start to finish?
A. From the foundation pour in 2017 to the final in August 2019.
Q. Did you receive the architect's field report number 14, about the west elevation windows?
A. I got it. I was at that site walk with Ingrid.

Q. What did you do about the missing sill pans?
A. I told Luis to fix the ones that were still open. Most of level 3 and 4 west were already wrapped and the cladding crew was behind us. We didn't pull windows that were already covered.
Q. Did you confirm the corrective work in writing to the architect?
A. I don't think I did. I don't have anything that says I did.

Q. Did you inspect each window opening before the window went in, as the subcontract says?
A. Not every one. I walked the floors when I could. With three hundred windows, the glazing foreman was responsible for his own openings.
Q. Did you release the west elevation for cladding?
A. Yes, in October 2018.

Q. Was any window on the west elevation water tested after installation?
A. Pacific tested some. I don't remember which ones. I never saw a report.
Q. Were you aware that the specification required at least two windows on the west elevation to be tested?
A. I was aware there was testing in the spec. I left that to Pacific.

(Whereupon, the excerpted portion of the deposition concluded.) REPORTER'S CERTIFICATE: I, Priscilla Obi, CSR No. 14022, certify that the foregoing is a true record of the testimony given.`},
		{ID: "d_hbr_rfa_resp", Title: "Castellan's Responses to Requests for Admission, Set One", Kind: "discovery_response", Class: discovery,
			Party: hbrDefendant, Priv: none, Author: "Carla Abernathy, Abernathy Stone LLP", Custodian: "Hale & Ortiz LLP", Date: "2025-05-09", Pages: 6,
			Body: `DEFENDANT CASTELLAN BUILDERS, INC.'S RESPONSES TO REQUESTS FOR ADMISSION, SET ONE
Responding under Code of Civil Procedure section 2033.210 and following.

REQUEST FOR ADMISSION NO. 1: Admit that the certificate of final completion and occupancy for the Project was issued on August 15, 2019. RESPONSE TO REQUEST FOR ADMISSION NO. 1: Admit.
REQUEST FOR ADMISSION NO. 2: Admit that Specification Section 08 51 13, Revision 1, required sill pan flashing at every window. RESPONSE TO REQUEST FOR ADMISSION NO. 2: Admit.

REQUEST FOR ADMISSION NO. 3: Admit that Castellan received Field Observation Report No. 14 in September 2018. RESPONSE TO REQUEST FOR ADMISSION NO. 3: Admit.
REQUEST FOR ADMISSION NO. 4: Admit that windows on the west elevation were installed without sill pan flashing. RESPONSE TO REQUEST FOR ADMISSION NO. 4: Castellan lacks sufficient information to admit or deny this request after a reasonable inquiry, because the windows are concealed by cladding.

REQUEST FOR ADMISSION NO. 5: Admit that Castellan's offer of repair of March 8, 2024 was limited to six units. RESPONSE TO REQUEST FOR ADMISSION NO. 5: Admit.
REQUEST FOR ADMISSION NO. 6: Admit that the leaks at the Project are caused by construction defects. RESPONSE TO REQUEST FOR ADMISSION NO. 6: Deny.

Dated: May 9, 2025. ABERNATHY STONE LLP, By: /s/ Carla Abernathy, Attorneys for Defendant Castellan Builders, Inc.`},
		{ID: "d_hbr_form_rog", Title: "Castellan's Responses to Form Interrogatories — Construction Litigation, Set One", Kind: "discovery_response", Class: discovery,
			Party: hbrDefendant, Priv: none, Author: "Carla Abernathy, Abernathy Stone LLP", Custodian: "Hale & Ortiz LLP", Date: "2025-05-09", Pages: 8,
			Body: `DEFENDANT CASTELLAN BUILDERS, INC.'S RESPONSES TO FORM INTERROGATORIES — CONSTRUCTION LITIGATION, SET ONE
(Judicial Council form DISC-005.)

FORM INTERROGATORY NO. 302.1: Castellan was the general contractor and the developer-seller of the Project. Castellan subcontracted the furnishing and installation of windows to Pacific Glazing Systems, Inc. under a subcontract dated February 12, 2018.

FORM INTERROGATORY NO. 317.1: Castellan contends that water intrusion at the Project results from the Association's failure to maintain exterior window sealant at the five-year interval in the maintenance manual, from owner alterations, and from the work of Pacific Glazing Systems, Inc., against which Castellan has filed a cross-complaint.

FORM INTERROGATORY NO. 320.1: Castellan's inspection of January 17 and 18, 2024 consisted of visual observation of 11 units and water testing at 4 windows. Castellan did not perform destructive testing.

Dated: May 9, 2025. Verified by Robert Castellan, President.`},
		{ID: "d_hbr_strategy_memo", Title: "Trial Themes and the Maintenance Defense (Memorandum)", Kind: "memo", Class: document,
			Party: hbrCounsel, Priv: wp, Author: "Dana Whitfield", Custodian: "Hale & Ortiz LLP", Date: "2026-08-10", Pages: 5,
			Body: `PRIVILEGED AND CONFIDENTIAL — ATTORNEY WORK PRODUCT
MEMORANDUM. To: File, Harborview Terrace v. Castellan. From: Dana Whitfield. Date: August 10, 2026. Re: Trial themes and the maintenance defense. An ethical screen is in place on this matter: do not share with screened personnel.

Theme: Castellan knew in September 2018. Field Report No. 14 told its superintendent the sill pans were missing, and Renner admits he did not pull the windows that were already covered. That supports negligence and undercuts any claim that the defect was hidden from Castellan.

Maintenance defense: the Board's 2023 decision to defer sealant maintenance is the weak point. Kestrel's Finding 4 answers it, because the sealant was intact and the water enters below the sealant line. We should not argue the deferral was proper; we should show it did not matter.

Offer of repair: Civil Code section 934 lets Castellan put the six-unit offer before the jury. We should show the offer ignored 25 of the 31 leaking units and proposed resealing rather than sill pans, which Kestrel says cannot stop the leaks.

Allocation: Pacific Glazing's insurer has signaled it will contribute up to $1,000,000 toward a global settlement. A realistic settlement range is $2.4 million to $2.9 million, given the sealant-maintenance risk and challenges to the relocation costs.`},
		{ID: "d_hbr_board_email", Title: "Email from Margaret Chen re settlement authority", Kind: "email", Class: corresp,
			Party: hbrPlaintiff, Priv: priv, Author: "Margaret Chen", Custodian: "Hale & Ortiz LLP", Date: "2026-09-02", Pages: 2,
			Body: `PRIVILEGED & CONFIDENTIAL — ATTORNEY-CLIENT COMMUNICATION
From: Margaret Chen <mchen.harborview@example.net>
To: Dana Whitfield <dana.whitfield@haleortiz.example>
Date: September 2, 2026 8:15 PM
Subject: Board vote on settlement authority

Dana, the board voted 4 to 1 tonight to authorize a settlement of not less than $2.6 million, so long as it funds the full west and south window replacement. Devon voted no because he wants the relocation costs covered in full. We would like to avoid a special assessment if at all possible.`},
		{ID: "d_hbr_cmo", Title: "Case Management Order No. 1", Kind: "order", Class: document,
			Party: "the Court", Priv: none, Author: "Superior Court of California, County of San Francisco", Custodian: "Hale & Ortiz LLP", Date: "2025-02-10", Pages: 4,
			Checked: "2025-02-12T19:09:47Z",
			Body: `SUPERIOR COURT OF CALIFORNIA, COUNTY OF SAN FRANCISCO
Harborview Terrace Owners Association v. Castellan Builders, Inc., Case No. CGC-24-619482. Complex Litigation, Department 613.
CASE MANAGEMENT ORDER NO. 1
The Court designates this action complex under California Rules of Court, rule 3.400.

1. Castellan shall file any cross-complaint by March 14, 2025. 2. The parties shall complete site inspections and destructive testing by March 31, 2025. 3. Expert disclosures, including all expert reports, are due July 1, 2025.

4. Mediation with Hon. Peter Lawson (Ret.) shall be completed by December 18, 2026. 5. Non-expert discovery closes January 29, 2027. 6. Trial is set for April 12, 2027. The Court will hold a further case management conference on November 19, 2026 at 10:30 a.m.

IT IS SO ORDERED. Dated: February 10, 2025. Judge of the Superior Court.`},
	}
}

func hbrFacts() []factSpec {
	confirmed := []chkSpec{{Days: 2, Result: records.CheckConfirmed}}
	return []factSpec{
		{ID: "f_hbr_001", S: "The Association is the homeowners association of Harborview Terrace, a 48-unit condominium at 2150 Third Street, San Francisco.", P: undisputed,
			Pl: "the homeowners association for Harborview Terrace, a 48-unit residential condominium at 2150 Third Street, San Francisco, California"},
		{ID: "f_hbr_002", S: "San Francisco issued the certificate of final completion and occupancy on August 15, 2019.", P: admitted,
			Pl: "issued a certificate of final completion and occupancy for the Project on August 15, 2019",
			C: []cite{{Doc: "d_hbr_rfa_resp", Q: "RESPONSE TO REQUEST FOR ADMISSION NO. 1: Admit."},
				{Doc: "d_hbr_depo_renner", Q: "From the foundation pour in 2017 to the final in August 2019."}}, Chk: confirmed},
		{ID: "f_hbr_003", S: "Castellan developed the Project, was its general contractor, and sold its units.", P: admitted,
			Pl: "developed the Project, acted as its general contractor, and sold its units to the public",
			C:  []cite{{Doc: "d_hbr_form_rog", Q: "Castellan was the general contractor and the developer-seller of the Project."}}},
		{ID: "f_hbr_004", S: "Castellan subcontracted the windows to Pacific Glazing Systems under a February 12, 2018 subcontract of $1,146,000.", P: undisputed,
			C: []cite{{Doc: "d_hbr_subcontract", Q: "Subcontractor: Pacific Glazing Systems, Inc. Date: February 12, 2018. Subcontract sum: $1,146,000."},
				{Doc: "d_hbr_form_rog", Q: "under a subcontract dated February 12, 2018"}}},
		{ID: "f_hbr_005", S: "The subcontract required Pacific Glazing to install sill pan flashing, complete and watertight, per Section 08 51 13.", P: undisputed,
			C: []cite{{Doc: "d_hbr_subcontract", Q: "including sill pan flashing, head flashing and perimeter sealant, complete and watertight"}}},
		{ID: "f_hbr_006", S: "The subcontract required Castellan's superintendent to inspect each window opening before installation and to accept an elevation before cladding.", P: undisputed,
			C: []cite{{Doc: "d_hbr_subcontract", Q: "Contractor's superintendent shall inspect each window opening before Subcontractor installs the window"}}},
		{ID: "f_hbr_007", S: "Specification Section 08 51 13, Revision 1, required every window to sit over a sloped sill pan with end dams and a back dam, lapped shingle fashion.", P: admitted,
			Pl: "required each window to be installed over a sloped sill pan flashing with end dams",
			C: []cite{{Doc: "d_hbr_spec", Q: "install each window over a sloped sill pan flashing with end dams and a back dam, turned up at jambs not less than 4 inches"},
				{Doc: "d_hbr_rfa_resp", Q: "RESPONSE TO REQUEST FOR ADMISSION NO. 2: Admit."}}, Chk: confirmed},
		{ID: "f_hbr_008", S: "Revision 0 of the specification (September 2017) left sill flashing to the manufacturer's recommendation; Revision 1 (Bulletin 4, November 20, 2017) added end dams, a back dam and the shingle lap.", P: undisputed,
			C: []cite{{Doc: "d_hbr_spec", V: 1, Q: "install each window over a sill pan flashing as recommended by the window manufacturer"},
				{Doc: "d_hbr_spec", Q: "Revision 1, November 20, 2017 (Bulletin 4)."}}},
		{ID: "f_hbr_009", S: "The specification required field water testing of at least two windows on each of the west and south elevations.", P: undisputed,
			C: []cite{{Doc: "d_hbr_spec", Q: "including at least two windows on each of the west and south elevations"}}},
		{ID: "f_hbr_010", S: "Windows on the west and south elevations were installed without sill pan flashing.", P: disputed,
			Pl: "installed windows on the west and south elevations without sill pan flashing",
			C: []cite{{Doc: "d_hbr_kestrel", Q: "None of the nine windows opened on the west and south elevations had a sill pan flashing."},
				{Doc: "d_hbr_rfa_resp", Q: "Castellan lacks sufficient information to admit or deny this request after a reasonable inquiry, because the windows are concealed by cladding."}},
			Prop: &propSpec{P: undisputed, Why: "Castellan offers no contrary evidence; its RFA response only pleads lack of information."}},
		{ID: "f_hbr_011", S: "At many windows the weather-resistive barrier below the sill was lapped in reverse.", P: disputed,
			Pl: "the weather-resistive barrier was lapped in reverse",
			C: []cite{{Doc: "d_hbr_kestrel", Q: "At seven of the nine, the weather-resistive barrier below the sill was lapped over the sill flashing tape in reverse shingle fashion."},
				{Doc: "d_hbr_field_report", Q: "At several openings the weather-resistive barrier below the sill is lapped over the sill flashing tape rather than under it."}}},
		{ID: "f_hbr_012", S: "The architect's Field Report No. 14 of September 20, 2018 recorded windows without sill pans at levels 3 and 4 of the west elevation, and Castellan received it.", P: admitted,
			C: []cite{{Doc: "d_hbr_field_report", Q: "Observed: windows installed at levels 3 and 4 of the west elevation without sill pans."},
				{Doc: "d_hbr_rfa_resp", Q: "RESPONSE TO REQUEST FOR ADMISSION NO. 3: Admit."}}, Chk: confirmed},
		{ID: "f_hbr_013", S: "Field Report No. 14 required Castellan to remove the affected windows, install sill pans and correct the laps before cladding, and to confirm the work in writing.", P: undisputed,
			C: []cite{{Doc: "d_hbr_field_report", Q: "Contractor to remove windows at affected openings, install sill pans per detail 7/A5.12, and correct the barrier laps before cladding."}}},
		{ID: "f_hbr_014", S: "Superintendent Dale Renner attended the September 20, 2018 site walk and received Field Report No. 14.", P: undisputed,
			C: []cite{{Doc: "d_hbr_depo_renner", Q: "I got it. I was at that site walk with Ingrid."},
				{Doc: "d_hbr_field_report", Q: "Present: Dale Renner (Castellan, superintendent)"}}},
		{ID: "f_hbr_015", S: "Castellan did not remove windows that were already covered when the field report issued.", P: undisputed,
			C:    []cite{{Doc: "d_hbr_depo_renner", Q: "We didn't pull windows that were already covered."}},
			Prop: &propSpec{P: admitted, Why: "Testimony of Castellan's own superintendent."}},
		{ID: "f_hbr_016", S: "Renner never confirmed the corrective work to the architect in writing.", P: undisputed,
			C: []cite{{Doc: "d_hbr_depo_renner", Q: "I don't think I did. I don't have anything that says I did."}}},
		{ID: "f_hbr_017", S: "Renner did not inspect every window opening before installation.", P: undisputed,
			C: []cite{{Doc: "d_hbr_depo_renner", Q: "Not every one. I walked the floors when I could."}}},
		{ID: "f_hbr_018", S: "Castellan released the west elevation for cladding in October 2018.", P: undisputed,
			C: []cite{{Doc: "d_hbr_depo_renner", Q: "Yes, in October 2018."}}},
		{ID: "f_hbr_019", S: "Renner never saw a water-test report for the west elevation windows.", P: undisputed,
			C: []cite{{Doc: "d_hbr_depo_renner", Q: "Pacific tested some. I don't remember which ones. I never saw a report."}}},
		{ID: "f_hbr_020", S: "Castellan's superintendent knew in September 2018 that west elevation windows lacked sill pans and did not stop or correct the installation.", P: disputed,
			Pl: "Castellan's superintendent knew in September 2018 that windows on the west elevation were being installed without sill pans",
			C:  []cite{{Doc: "d_hbr_depo_renner", Q: "I told Luis to fix the ones that were still open."}}},
		{ID: "f_hbr_021", S: "From the winter of 2021, owners on the west and south elevations reported water at window corners in rain.", P: undisputed,
			Pl: "Beginning in the winter of 2021, owners of units on the west and south elevations reported water entering at window corners during rain.",
			C:  []cite{{Doc: "d_hbr_leak_log", Q: "2021-11-09 Unit 405 (west): water on sill and floor below bedroom window after overnight rain."}}},
		{ID: "f_hbr_022", S: "Owners filed 52 water-related requests from 31 units between November 2021 and August 2023.", P: undisputed,
			C: []cite{{Doc: "d_hbr_leak_log", Q: "52 water-related requests from 31 units."},
				{Doc: "d_hbr_minutes", Q: "Management reported 52 water-related requests from 31 units since November 2021."}}},
		{ID: "f_hbr_023", S: "No water-related requests came from units on the north and east elevations.", P: undisputed,
			C: []cite{{Doc: "d_hbr_leak_log", Q: "No water-related requests came from units on the north and east elevations."}}},
		{ID: "f_hbr_024", S: "On September 14, 2023 the Board unanimously resolved to serve a Civil Code § 910 notice and to authorize destructive testing.", P: undisputed,
			C: []cite{{Doc: "d_hbr_minutes", Q: "Resolved, by unanimous vote, to serve a notice of claim on Castellan Builders, Inc. under Civil Code section 910"}}},
		{ID: "f_hbr_025", S: "The Board deferred the 2024 exterior sealant maintenance pending the investigation.", P: undisputed,
			C: []cite{{Doc: "d_hbr_minutes", Q: "Resolved to defer the 2024 exterior sealant maintenance pending the investigation."}}},
		{ID: "f_hbr_026", S: "The Association's maintenance manual calls for exterior window sealant maintenance at five-year intervals.", P: unresolved,
			C: []cite{{Doc: "d_hbr_offer", Q: "which the Association's maintenance manual calls for at five-year intervals"},
				{Doc: "d_hbr_form_rog", Q: "failure to maintain exterior window sealant at the five-year interval in the maintenance manual"}},
			Prop: &propSpec{P: undisputed, Why: "Both Castellan documents state the interval and the Association has not contested it."}},
		{ID: "f_hbr_027", S: "The Association served a Civil Code § 910 notice of claim on November 2, 2023.", P: undisputed,
			Pl: "On November 2, 2023, the Association served Castellan with a notice of claim under Civil Code section 910.",
			C:  []cite{{Doc: "d_hbr_notice", Q: "Date: November 2, 2023. Sent by certified mail."}}},
		{ID: "f_hbr_028", S: "Castellan acknowledged the notice on November 30, 2023 and inspected on January 17 and 18, 2024.", P: undisputed,
			Pl: "Castellan acknowledged receipt of the notice on November 30, 2023",
			C:  []cite{{Doc: "d_hbr_offer", Q: "following its inspection of the Project on January 17 and 18, 2024"}}},
		{ID: "f_hbr_029", S: "Castellan's inspection was visual observation of 11 units and water testing at 4 windows, with no destructive testing.", P: undisputed,
			C: []cite{{Doc: "d_hbr_form_rog", Q: "consisted of visual observation of 11 units and water testing at 4 windows. Castellan did not perform destructive testing."}}},
		{ID: "f_hbr_030", S: "On March 8, 2024 Castellan offered to repair windows in six of the 31 leaking units.", P: admitted,
			Pl: "On March 8, 2024, Castellan offered to repair windows in only six of the 31 units",
			C: []cite{{Doc: "d_hbr_offer", Q: "Castellan offers to repair the window leaks in Units 302, 304, 405, 407, 506 and 602"},
				{Doc: "d_hbr_rfa_resp", Q: "RESPONSE TO REQUEST FOR ADMISSION NO. 5: Admit."}}},
		{ID: "f_hbr_031", S: "Castellan's offer proposed reinstalling windows with new sealant and flashing tape, not sill pans.", P: undisputed,
			C: []cite{{Doc: "d_hbr_offer", Q: "by removing and reinstalling the affected windows with new sealant and flashing tape"}}},
		{ID: "f_hbr_032", S: "Castellan attributed staining at the other units to deferred sealant maintenance.", P: undisputed,
			C: []cite{{Doc: "d_hbr_offer", Q: "Staining at other windows is consistent with deferred maintenance of exterior sealant"}}},
		{ID: "f_hbr_033", S: "The Association rejected the offer of repair in writing on April 5, 2024.", P: unresolved,
			Pl:   "The Association rejected Castellan's offer of repair on April 5, 2024",
			Prop: &propSpec{P: undisputed, Why: "The Association's own act; the rejection letter should be added to the record."}},
		{ID: "f_hbr_034", S: "The leaks are caused by construction defects: missing sill pans and reversed barrier laps.", P: disputed,
			C: []cite{{Doc: "d_hbr_kestrel", Q: "The leaks are caused by the omission of sill pan flashing and the reversed laps of the weather-resistive barrier"},
				{Doc: "d_hbr_rfa_resp", Q: "RESPONSE TO REQUEST FOR ADMISSION NO. 6: Deny."}}},
		{ID: "f_hbr_035", S: "Twelve of fourteen windows tested leaked at 2.86 psf or less against the specified 6.24 psf; the two that passed were on the north elevation.", P: undisputed,
			C:    []cite{{Doc: "d_hbr_kestrel", Q: "Twelve of the fourteen windows tested leaked at the lower corners at test pressures of 2.86 psf or less, well below the specified 6.24 psf."}},
			Prop: &propSpec{P: disputed, Why: "Castellan's RFA No. 6 denial suggests it will contest the testing through its own expert."}},
		{ID: "f_hbr_036", S: "Framing and sheathing below the sill had decayed at six of nine openings, up to 18 inches below the sill at Unit 302.", P: undisputed,
			C: []cite{{Doc: "d_hbr_kestrel", Q: "At six of the nine openings, wood sheathing and studs below the sill showed decay, with moisture content above 28 percent."}}},
		{ID: "f_hbr_037", S: "Perimeter sealant was intact at every window examined; water enters below the sealant line at the sill.", P: disputed,
			C: []cite{{Doc: "d_hbr_kestrel", Q: "Window perimeter sealant was intact and adhered at every window we examined."},
				{Doc: "d_hbr_form_rog", Q: "results from the Association's failure to maintain exterior window sealant"}}},
		{ID: "f_hbr_038", S: "Repair requires removing and reinstalling all 212 windows on the west and south elevations.", P: disputed,
			C: []cite{{Doc: "d_hbr_kestrel", Q: "repair requires removing and reinstalling all 212 windows on those elevations with sill pans and corrected laps"},
				{Doc: "d_hbr_offer", Q: "Castellan does not offer to repair those units."}}},
		{ID: "f_hbr_039", S: "The estimated repair cost is $3,480,000.", P: disputed,
			Pl: "is not less than $3,480,000",
			C:  []cite{{Doc: "d_hbr_estimate", Q: "TOTAL ESTIMATED REPAIR COST: $3,480,000."}}},
		{ID: "f_hbr_040", S: "Removing and reinstalling the 212 windows is estimated at $1,908,000.", P: undisputed,
			C: []cite{{Doc: "d_hbr_estimate", Q: "Remove and reinstall 212 windows with new sill pans, flashing and barrier: $1,908,000."}}},
		{ID: "f_hbr_041", S: "The estimate includes a $186,000 owner relocation allowance.", P: unresolved,
			C: []cite{{Doc: "d_hbr_estimate", Q: "Owner relocation allowance during work: $186,000."}}},
		{ID: "f_hbr_042", S: "The windows and their flashing violate the functionality standard of Civil Code § 896(a)(2).", P: denied,
			Pl: "violate the functionality standard of Civil Code section 896, subdivision (a)(2)"},
		{ID: "f_hbr_043", S: "Castellan impliedly warranted that the Project was built in a good and workmanlike manner.", P: denied,
			Pl: "Castellan impliedly warranted that the Project was built in a good and workmanlike manner"},
		{ID: "f_hbr_044", S: "Owner alterations contributed to the water intrusion.", P: denied,
			C:    []cite{{Doc: "d_hbr_form_rog", Q: "from owner alterations"}},
			Prop: &propSpec{P: unresolved, Why: "Castellan has identified no unit or alteration; nothing in the record confirms or refutes it."}},
		{ID: "f_hbr_045", S: "Castellan has cross-complained against Pacific Glazing Systems.", P: undisputed,
			C: []cite{{Doc: "d_hbr_form_rog", Q: "against which Castellan has filed a cross-complaint"}}},
		{ID: "f_hbr_046", S: "Pacific Glazing warranted its work for ten years from substantial completion and must repair leakage through or around it at its own cost.", P: undisputed,
			C: []cite{{Doc: "d_hbr_subcontract", Q: "shall repair any water leakage through or around its work at its own cost"}}},
		{ID: "f_hbr_047", S: "Pacific Glazing's insurer has signaled up to $1,000,000 toward a global settlement.", P: unresolved, Priv: wp,
			C: []cite{{Doc: "d_hbr_strategy_memo", Q: "Pacific Glazing's insurer has signaled it will contribute up to $1,000,000 toward a global settlement."}}},
		{ID: "f_hbr_048", S: "A realistic settlement range is $2.4 million to $2.9 million.", P: unresolved, Priv: wp,
			C: []cite{{Doc: "d_hbr_strategy_memo", Q: "A realistic settlement range is $2.4 million to $2.9 million"}}},
		{ID: "f_hbr_049", S: "The Board voted 4 to 1 to authorize a settlement of not less than $2.6 million if it funds the full west and south window replacement.", P: undisputed, Priv: priv,
			C: []cite{{Doc: "d_hbr_board_email", Q: "the board voted 4 to 1 tonight to authorize a settlement of not less than $2.6 million, so long as it funds the full west and south window replacement"}}},
		{ID: "f_hbr_050", S: "The Board wants to avoid a special assessment.", P: unresolved, Priv: priv,
			C: []cite{{Doc: "d_hbr_board_email", Q: "We would like to avoid a special assessment if at all possible."}}},
		{ID: "f_hbr_051", S: "The owner of Unit 207 installed interior window film in 2020.", P: unresolved},
		{ID: "f_hbr_052", S: "Pacific Glazing water-tested three west elevation windows in November 2018 and all passed.", P: unresolved,
			Prop: &propSpec{P: disputed, Why: "Renner recalls testing but never saw a report; no test report has been produced."}},
		{ID: "f_hbr_053", S: "The Association's reserve study holds $410,000 for exterior envelope work.", P: unresolved},
		{ID: "f_hbr_054", S: "Castellan's liability insurer is defending under a reservation of rights.", P: unresolved},
		{ID: "f_hbr_055", S: "The Association has standing under Civil Code § 945 to sue for damage to common areas and separate interests it must maintain.", P: denied,
			Pl: "The Association has standing under Civil Code section 945"},
	}
}

func hbrDeadlines() []deadlineSpec {
	const order = "d_hbr_cmo"
	return []deadlineSpec{
		{ID: "dl_hbr_cross_complaint", Title: "Castellan's last day to file a cross-complaint", Due: "2025-03-14", Kind: "filing",
			Rule: "Case Management Order No. 1 ¶ 1", Doc: order, Q: "1. Castellan shall file any cross-complaint by March 14, 2025.", Done: true},
		{ID: "dl_hbr_destructive_testing", Title: "Complete site inspections and destructive testing", Due: "2025-03-31", Kind: "discovery",
			Rule: "Case Management Order No. 1 ¶ 2", Doc: order, Q: "The parties shall complete site inspections and destructive testing by March 31, 2025.", Done: true, Checked: true},
		{ID: "dl_hbr_expert_disclosure", Title: "Expert disclosures with reports", Due: "2025-07-01", Kind: "expert",
			Rule: "Case Management Order No. 1 ¶ 3", Doc: order, Q: "Expert disclosures, including all expert reports, are due July 1, 2025.", Done: true, Checked: true},
		{ID: "dl_hbr_cmc", Title: "Further case management conference", Due: "2026-11-19", Kind: "hearing",
			Rule: "Case Management Order No. 1", Doc: order, Q: "further case management conference on November 19, 2026 at 10:30 a.m."},
		{ID: "dl_hbr_mediation", Title: "Complete mediation with Hon. Peter Lawson (Ret.)", Due: "2026-12-18", Kind: "mediation",
			Rule: "Case Management Order No. 1 ¶ 4", Doc: order, Q: "shall be completed by December 18, 2026", Checked: true},
		{ID: "dl_hbr_discovery_close", Title: "Non-expert discovery closes", Due: "2027-01-29", Kind: "discovery",
			Rule: "Case Management Order No. 1 ¶ 5", Doc: order, Q: "5. Non-expert discovery closes January 29, 2027."},
		{ID: "dl_hbr_trial", Title: "Trial, Department 613", Due: "2027-04-12", Kind: "trial",
			Rule: "Case Management Order No. 1 ¶ 6", Doc: order, Q: "6. Trial is set for April 12, 2027."},
		{ID: "dl_hbr_latent_defect_limit", Title: "Ten-year limit for claims under the Right to Repair Act (from completion)", Due: "2029-08-15", Kind: "filing",
			Rule: "Civ. Code § 941(a)", Doc: "d_hbr_rfa_resp", Q: "RESPONSE TO REQUEST FOR ADMISSION NO. 1: Admit.", Checked: true},
	}
}

func hbrNotes() []noteSpec {
	return []noteSpec{
		{ID: "n_hbr_001", Author: "p_dana_whitfield", At: "2024-09-30T21:05:00Z",
			Body: "Ethical screen established at intake. One staff member worked on this project for the builder's prelitigation counsel before joining the firm. The screened person has no access to this matter's record, is excluded from case meetings, and has confirmed in writing that they will not discuss it. Written notice of the screen sent to Castellan's counsel."},
		{ID: "n_hbr_002", Author: "p_dana_whitfield", At: "2025-07-02T18:30:41Z", Priv: wp, Doc: "d_hbr_kestrel",
			Body: "Kestrel report served with the July 1 disclosure. Finding 4 (sealant intact) is our answer to the maintenance defense; prepare Kowalski on the Board's 2023 deferral."},
		{ID: "n_hbr_003", Author: "p_dana_whitfield", At: "2026-01-23T00:12:09Z", Priv: wp, Doc: "d_hbr_depo_renner",
			Body: "Renner admitted he released the west elevation for cladding in October 2018 without pulling the covered windows and never confirmed the corrective work to the architect. Key testimony for the negligence claim and the knowledge theme."},
		{ID: "n_hbr_004", Author: "p_dana_whitfield", At: "2026-09-03T16:44:58Z", Priv: priv, Doc: "d_hbr_board_email",
			Body: "Board authorized settlement of not less than $2.6 million if it funds the full west and south replacement; one director dissents over relocation costs. Keep the authority figure out of anything shared with Pacific Glazing's counsel."},
		{ID: "n_hbr_005", Author: "p_dana_whitfield", At: "2026-10-28T21:17:50Z", Doc: "d_hbr_cmo",
			Body: "Further case management conference set for November 19 at 10:30 a.m. in Department 613. Joint case management statement to be filed 15 days before (Cal. Rules of Court, rule 3.725)."},
	}
}
