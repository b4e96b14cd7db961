package main

import (
	"strings"

	"github.com/custodymcp/custody/shared/records"
)

// Meridian Logistics v. Caldwell Freight: a cargo-loss case in federal court.
// A carrier ran a pharmaceutical load in the wrong refrigeration mode; the
// unit stopped overnight; the consignee refused the load; the client paid
// its customer and sues the carrier. The fight is over the $250,000 cap.

const (
	merPlaintiff = "Meridian Logistics, Inc."
	merDefendant = "Caldwell Freight Systems, LLC"
	merCounsel   = "Hale & Ortiz LLP (counsel for Meridian)"
)

var merMSA = `MASTER FREIGHT SERVICES AGREEMENT
This Master Freight Services Agreement is entered into as of June 1, 2024 (the "Effective Date") between Meridian Logistics, Inc., a California corporation ("Shipper"), and Caldwell Freight Systems, LLC, a Nevada limited liability company, USDOT No. 2841177 ("Carrier").

1. DEFINITIONS. "Load" means each shipment tendered by Shipper and accepted by Carrier under a bill of lading. "Pharma Load" means a Load designated "Pharma 2–8°C" on its bill of lading. "Temperature Range" means the range of product temperatures specified on the bill of lading for a Load.

2. TERM. This Agreement begins on the Effective Date and continues for two (2) years, and renews for successive one-year terms unless either party gives written notice of non-renewal at least sixty (60) days before the end of the then-current term. 3. TENDER AND ACCEPTANCE. Carrier may accept or decline any Load offered by Shipper. A Load is accepted when Carrier's driver signs the bill of lading.

4. EQUIPMENT AND TEMPERATURE CONTROL. 4.1 Carrier shall furnish trailers equipped with a functioning refrigeration unit capable of maintaining the Temperature Range in ambient conditions from -20°C to 45°C. 4.2 Carrier shall operate the refrigeration unit of each trailer in continuous-run mode, and not in any start-stop or cycle mode, for every load designated "Pharma 2–8°C" on the bill of lading.

4.3 Carrier shall monitor each Pharma Load by telematics and shall respond to any unit alarm within thirty (30) minutes by contacting the driver and taking the corrective action the alarm requires. 4.4 Carrier shall download and retain the refrigeration unit data for each Load for three (3) years and shall furnish a complete download to Shipper within forty-eight (48) hours of Shipper's request.

5. DRIVERS. Carrier shall assign to Pharma Loads only drivers who have completed Carrier's training for temperature-controlled loads. Carrier is responsible for its drivers' compliance with the hours-of-service regulations, 49 C.F.R. Part 395, and shall plan each trip so that required rest breaks do not compromise the Temperature Range.

6. LOADING. 6.1 Carrier shall pre-cool each trailer to the set point before it is presented for loading. 6.2 Shipper shall load product at a temperature within the Temperature Range and shall record product pulp temperatures on its loading checklist, which Carrier's driver shall countersign.

7. RATES AND PAYMENT. Shipper shall pay the rates in Schedule A within thirty (30) days of a correct invoice. 8. CLAIMS. Shipper shall file any claim for loss or damage in writing within nine (9) months after delivery, or after a reasonable time for delivery has elapsed, as provided in 49 U.S.C. § 14706(e).

9. INDEMNITY. 9.1 Each party shall indemnify the other against third-party claims for bodily injury or property damage caused by its negligence. 9.2 Carrier shall indemnify Shipper for all losses, including amounts Shipper pays to its customers, arising from Carrier's failure to maintain the Temperature Range for a Load.

10. INSURANCE. Carrier shall maintain cargo insurance of not less than $500,000 per occurrence, naming Shipper as an additional insured, and shall provide certificates on request.

11. LIMITATION OF LIABILITY. 11.1 Neither party is liable for consequential damages except under Section 9. 11.2 Carrier's liability for a Load begins when Carrier's driver signs the bill of lading and ends on delivery. 11.3 Except as provided in Section 11.4, Carrier's liability for loss of or damage to a Load shall not exceed $250,000 per shipment unless Shipper declares a higher value on the bill of lading and pays the excess valuation charge stated in Schedule B.

11.4 The limitation in Section 11.3 does not apply to loss or damage caused by Carrier's gross negligence or willful misconduct, or by Carrier's failure to comply with Section 4.2 or Section 4.3.

12. RELATIONSHIP. Carrier is an independent contractor and not an agent of Shipper. 13. CONFIDENTIALITY. Each party shall keep confidential the rates and terms of this Agreement, except as required by law or to enforce it.

14. GENERAL. 14.6 This Agreement is governed by the laws of the State of California, except to the extent federal law governs. 14.7 Any action arising out of this Agreement shall be brought in the state or federal courts located in Alameda County, California, and each party consents to the jurisdiction of those courts. 14.9 The prevailing party in any action to enforce this Agreement is entitled to its reasonable attorneys' fees.

SCHEDULE B — EXCESS VALUATION. Shipper may declare a value above $250,000 for a Load by entering the declared value on the bill of lading. The excess valuation charge is 0.35% of the declared value above $250,000, invoiced with the freight charges.

IN WITNESS WHEREOF, the parties have executed this Agreement as of the Effective Date. MERIDIAN LOGISTICS, INC. By: /s/ Victor Osei, General Counsel and Chief Operating Officer. CALDWELL FREIGHT SYSTEMS, LLC By: /s/ Douglas Caldwell, President.`

// merMSADraft is Carrier's May 2024 draft: a lower cap and no exception for
// the continuous-run and alarm-response duties.
var merMSADraft = strings.NewReplacer(
	"MASTER FREIGHT SERVICES AGREEMENT\n", "DRAFT — FOR DISCUSSION ONLY — CARRIER'S DRAFT OF MAY 10, 2024\nMASTER FREIGHT SERVICES AGREEMENT\n",
	"shall not exceed $250,000 per shipment", "shall not exceed $100,000 per shipment",
	"by Carrier's gross negligence or willful misconduct, or by Carrier's failure to comply with Section 4.2 or Section 4.3.", "by Carrier's gross negligence or willful misconduct.",
	"a value above $250,000 for a Load", "a value above $100,000 for a Load",
	"declared value above $250,000, invoiced", "declared value above $100,000, invoiced",
	"IN WITNESS WHEREOF, the parties have executed this Agreement as of the Effective Date. MERIDIAN LOGISTICS, INC. By: /s/ Victor Osei, General Counsel and Chief Operating Officer. CALDWELL FREIGHT SYSTEMS, LLC By: /s/ Douglas Caldwell, President.",
	"[Signature blocks intentionally left blank in draft.]",
).Replace(merMSA)

var merReyes = `EXPERT REPORT OF ALAN REYES, Ph.D.
Meridian Logistics, Inc. v. Caldwell Freight Systems, LLC, No. 4:25-cv-03318-JWQ (N.D. Cal.). Submitted under Federal Rule of Civil Procedure 26(a)(2)(B).

QUALIFICATIONS
I hold a Ph.D. in mechanical engineering from the University of California, Davis, and have worked for twenty-two years on transport refrigeration, including eleven years designing control systems for trailer refrigeration units. I am the principal of Reyes Cold Chain Consulting. My compensation is $475 per hour.

MATERIALS CONSIDERED
I reviewed the Polarline unit data download for trailer 5317, the ThermaTrace logger report for serial TT4-00981, Bill of Lading No. CFS-884213, the Master Freight Services Agreement, the depositions of Travis Boone and Lena Hartmann, and Caldwell's discovery responses.

OPINION 1: In cycle-sentry mode, a trailer refrigeration unit stops its engine when the set point is reached and restarts it automatically when the temperature drifts or the battery needs charging. Each automatic restart depends on the battery. The unit on trailer 5317 attempted an automatic restart at 21:05:12 with a battery voltage of 11.2 V, below the 12.1 V the unit requires, and failed to start.

OPINION 2: In continuous-run mode the engine does not stop between cooling cycles, so no automatic restart would have been needed during the driver's rest break. Had the unit been operating in continuous-run mode, it is more probable than not that the return-air temperature would have remained within 2°C to 8°C for the entire trip.

OPINION 3: The unit's fuel level was three-eighths of a tank at the time of the shutdown, sufficient for at least fourteen hours of continuous-run operation at the ambient temperatures recorded that night. Fuel was not a factor in the shutdown.

OPINION 4: The return-air temperature exceeded 8°C from 21:17 on January 14 until 04:09 on January 15, a period of 6 hours and 52 minutes, and reached 14.2°C at 01:55. Product temperature lags air temperature: the logger inside pallet 11 recorded 7 hours and 2 minutes above 8°C with a maximum of 11.8°C.

OPINION 5: An alarm response within thirty minutes, as Section 4.3 of the Agreement requires, would have allowed the driver to restart the unit before 21:40, limiting any excursion of the return air to well under the two-hour threshold in Solano's procedure. The unit was restarted within minutes of the driver being contacted at 03:10.

OPINION 6: I found no evidence that the product was tendered above 8°C. The logger inside pallet 11 recorded 4.9°C at 05:40 on January 14 and remained between 4.2°C and 4.9°C until 21:00. A pallet loaded at 9.1°C would have shown a declining trend over the first hours of the trip, and none appears.

I reserve the right to supplement these opinions if additional information becomes available. I declare under penalty of perjury under the laws of the United States that the foregoing is true and correct. Executed on July 10, 2026, at Davis, California. /s/ Alan Reyes, Ph.D.`

var merReyesServed = strings.NewReplacer(
	"The unit's fuel level was three-eighths of a tank at the time of the shutdown, sufficient for at least fourteen hours", "The unit's fuel level was one-eighth of a tank at the time of the shutdown, sufficient for at least five hours",
	"Executed on July 10, 2026", "Executed on June 26, 2026",
).Replace(merReyes)

func meridian() matterSpec {
	m := records.Matter{
		ID:               "m_meridian",
		Name:             "Meridian v. Caldwell",
		Caption:          "Meridian Logistics, Inc. v. Caldwell Freight Systems, LLC",
		Court:            "United States District Court for the Northern District of California (Oakland Division)",
		DocketNumber:     "4:25-cv-03318-JWQ",
		Client:           merPlaintiff,
		ClientRole:       "plaintiff",
		PracticeArea:     "Commercial litigation: cargo loss (Carmack Amendment) and breach of contract",
		Status:           records.MatterOpen,
		Team:             []string{"p_dana_whitfield", "p_sam_okafor", "p_priya_nair"},
		SourceDocumentID: "d_mer_complaint",
		OpenedOn:         "2025-03-24",
		CreatedAt:        mustTime("2025-03-24T18:12:40Z"),
		UpdatedAt:        mustTime("2025-10-01T16:05:11Z"),
	}
	return matterSpec{
		M: m, Plaintiff: merPlaintiff, Defendant: merDefendant,
		Pleadings: merPleadings(),
		Docs:      merDocs(),
		Facts:     merFacts(),
		Deadlines: merDeadlines(),
		Notes:     merNotes(),
	}
}

func merPleadings() pleadingSpec {
	return pleadingSpec{
		Complaint: docSpec{ID: "d_mer_complaint", Title: "Complaint for Damages (Carmack Amendment; Breach of Contract; Contractual Indemnity)",
			Kind: "complaint", Class: pleading, Party: merPlaintiff, Priv: none, Author: "Dana Whitfield, Hale & Ortiz LLP",
			Custodian: "Hale & Ortiz LLP", Date: "2025-04-08", Pages: 18, Checked: "2025-04-10T17:20:05Z"},
		Head: []string{
			"HALE & ORTIZ LLP\nDana Whitfield (SBN 287114)\n1999 Harrison Street, Suite 1800, Oakland, California 94612\nAttorneys for Plaintiff Meridian Logistics, Inc.\nUNITED STATES DISTRICT COURT, NORTHERN DISTRICT OF CALIFORNIA, OAKLAND DIVISION",
			"MERIDIAN LOGISTICS, INC., a California corporation, Plaintiff, v. CALDWELL FREIGHT SYSTEMS, LLC, a Nevada limited liability company, Defendant. Case No. 4:25-cv-03318-JWQ. COMPLAINT FOR DAMAGES: (1) CARMACK AMENDMENT, 49 U.S.C. § 14706; (2) BREACH OF CONTRACT; (3) CONTRACTUAL INDEMNITY. DEMAND FOR JURY TRIAL.",
			"NATURE OF THE ACTION\nThis action arises from the destruction of a $1.28 million shipment of refrigerated biologic medicine that Caldwell carried from Stockton, California to Tempe, Arizona in a trailer whose refrigeration unit was set to the wrong mode and then stopped for more than six hours while no one at Caldwell answered its alarm.",
		},
		Items: []allegation{
			{Heading: "PARTIES", Text: "Plaintiff Meridian Logistics, Inc. (\"Meridian\") is a California corporation with its principal place of business at 4100 Arch Road, Stockton, California 95215. Meridian provides warehousing and distribution services to manufacturers of temperature-sensitive pharmaceutical products."},
			{Text: "Defendant Caldwell Freight Systems, LLC (\"Caldwell\") is a Nevada limited liability company with its principal place of business in Sparks, Nevada. Caldwell is a motor carrier registered with the Federal Motor Carrier Safety Administration under USDOT No. 2841177."},
			{Heading: "JURISDICTION AND VENUE", Text: "This Court has subject matter jurisdiction under 28 U.S.C. §§ 1331 and 1337(a) because Meridian's first claim arises under 49 U.S.C. § 14706 and the matter in controversy for the bill of lading exceeds $10,000, exclusive of interest and costs. The Court has supplemental jurisdiction over the remaining claims under 28 U.S.C. § 1367."},
			{Text: "Venue is proper in this District because Section 14.7 of the parties' agreement provides that any action arising out of it shall be brought in the state or federal courts located in Alameda County, California, and Caldwell has consented to that forum."},
			{Heading: "FACTUAL ALLEGATIONS", Text: "On June 1, 2024, Meridian and Caldwell entered into a Master Freight Services Agreement (the \"Agreement\") under which Caldwell agreed to transport temperature-controlled freight tendered by Meridian."},
			{Text: "Section 4.2 of the Agreement requires Caldwell to operate the refrigeration unit of each trailer in continuous-run mode for every load designated \"Pharma 2–8°C\" on the bill of lading."},
			{Text: "Section 9.2 of the Agreement requires Caldwell to indemnify Meridian for all losses, including amounts Meridian pays to its customers, arising from Caldwell's failure to maintain the temperature range specified for a load."},
			{Text: "Section 11.4 of the Agreement provides that the limitation of liability in Section 11.3 does not apply to loss or damage caused by Caldwell's failure to comply with Section 4.2."},
			{Text: "On January 14, 2025, Meridian tendered to Caldwell at its Stockton facility a shipment of 22 pallets of refrigerated biologic pharmaceutical product owned by Meridian's customer, Solano BioPharma, Inc. (\"Solano\"), for delivery to Desert Valley Health Distribution in Tempe, Arizona (the \"Shipment\")."},
			{Text: "Caldwell issued Bill of Lading No. CFS-884213 for the Shipment. The bill of lading designates the Shipment \"Pharma 2–8°C\" and states \"Reefer: CONTINUOUS.\""},
			{Text: "The Shipment was tendered to Caldwell in good order and condition, at a product temperature within the 2°C to 8°C range."},
			{Text: "Caldwell's driver, Travis Boone, departed Stockton with the Shipment at approximately 6:10 a.m. on January 14, 2025, in Caldwell trailer 5317."},
			{Text: "The refrigeration unit on trailer 5317 was set to operate in cycle-sentry (start-stop) mode, not continuous-run mode, from the time the Shipment was loaded."},
			{Text: "At approximately 8:40 p.m. on January 14, 2025, Mr. Boone parked trailer 5317 at a truck stop in Barstow, California, for a ten-hour rest break."},
			{Text: "At 9:05 p.m., the refrigeration unit shut down when it attempted an automatic restart in cycle-sentry mode and failed to start."},
			{Text: "Caldwell's telematics system transmitted a unit-shutdown alert to Caldwell's dispatch office at 9:06 p.m. on January 14, 2025."},
			{Text: "No one at Caldwell contacted Mr. Boone about the alert until 3:10 a.m. on January 15, 2025, more than six hours later."},
			{Text: "The return-air temperature in trailer 5317 exceeded 8°C from 9:17 p.m. on January 14 until 4:09 a.m. on January 15, 2025, and reached a maximum of 14.2°C."},
			{Text: "On January 15, 2025, Desert Valley Health Distribution rejected all 22 pallets of the Shipment because the temperature logger packed with the Shipment recorded an excursion above 8°C."},
			{Text: "Under its quality procedures, Solano ordered the destruction of the entire Shipment."},
			{Text: "Solano demanded that Meridian pay $1,322,850 for the destroyed product and associated disposal and replacement-freight costs."},
			{Text: "On March 14, 2025, Meridian paid Solano $1,322,850 in settlement of Solano's claim."},
			{Text: "On February 3, 2025, Meridian submitted a written claim to Caldwell for the loss of the Shipment in the amount of $1,322,850."},
			{Text: "On March 5, 2025, Caldwell declined Meridian's claim in writing, except for a tender of $250,000 that Caldwell described as the limit of its liability."},
			{Text: "Meridian has performed all conditions, covenants and promises required of it under the Agreement, except those excused by Caldwell's conduct."},
			{Heading: "FIRST CLAIM FOR RELIEF (Carmack Amendment, 49 U.S.C. § 14706)", Text: "Meridian incorporates paragraphs 1 through 25."},
			{Text: "Caldwell was the carrier that received the Shipment and the delivering carrier under 49 U.S.C. § 14706."},
			{Text: "Caldwell is liable for the actual loss of the Shipment, which Meridian is entitled to recover as the party that bore the loss."},
			{Heading: "SECOND CLAIM FOR RELIEF (Breach of Contract)", Text: "Meridian incorporates paragraphs 1 through 28."},
			{Text: "Caldwell breached Section 4.2 of the Agreement by operating the refrigeration unit of trailer 5317 in cycle-sentry mode while carrying the Shipment."},
			{Text: "Caldwell breached Section 4.4 of the Agreement by failing to furnish the refrigeration unit download within 48 hours of Meridian's request of January 16, 2025."},
			{Heading: "THIRD CLAIM FOR RELIEF (Contractual Indemnity)", Text: "Meridian incorporates paragraphs 1 through 31."},
			{Text: "Meridian's payment to Solano is a loss arising from Caldwell's failure to maintain the specified temperature range for the Shipment, within the meaning of Section 9.2 of the Agreement."},
			{Text: "Meridian tendered its claim for indemnity to Caldwell, and Caldwell refused it."},
		},
		Tail: []string{
			"PRAYER FOR RELIEF\nWHEREFORE, Meridian prays for judgment against Caldwell as follows: (a) damages in the amount of $1,322,850, or such other amount as is proven at trial; (b) prejudgment interest from March 14, 2025; (c) costs of suit; (d) attorneys' fees to the extent permitted by Section 14.9 of the Agreement; and (e) such other relief as the Court deems just.",
			"DEMAND FOR JURY TRIAL\nMeridian demands a trial by jury on all issues so triable.\nDated: April 8, 2025. HALE & ORTIZ LLP, By: /s/ Dana Whitfield, Attorneys for Plaintiff Meridian Logistics, Inc.",
		},
		Answer: docSpec{ID: "d_mer_answer", Title: "Defendant Caldwell Freight Systems, LLC's Answer and Affirmative Defenses",
			Kind: "answer", Class: pleading, Party: merDefendant, Priv: none, Author: "Gordon A. Pruett, Pruett Lowe LLP",
			Custodian: "Hale & Ortiz LLP", Date: "2025-05-20", Pages: 12},
		Defendant: "Caldwell",
		Codes:     "AAJAARRRPADAPAPDDDLLLLAADIADIDDIDP",
		Partial: map[int]string{
			9:  "Caldwell admits that on January 14, 2025, it received 22 pallets from Meridian at Stockton, California, for delivery to Tempe, Arizona. Caldwell lacks knowledge or information sufficient to form a belief about the ownership of the product and on that basis denies the remaining allegations of Paragraph 9.",
			13: "Caldwell admits that the refrigeration unit on trailer 5317 operated in cycle-sentry mode during a portion of the trip and otherwise denies the allegations of Paragraph 13.",
			15: "Caldwell admits that the refrigeration unit on trailer 5317 stopped at approximately 9:05 p.m. on January 14, 2025, and denies that the stop was caused by the unit's operating mode.",
			34: "Caldwell admits that Meridian demanded indemnity and that Caldwell declined the demand, and otherwise denies the allegations of Paragraph 34.",
		},
		AnswerHead: []string{
			"PRUETT LOWE LLP\nGordon A. Pruett (SBN 198822)\n50 West Liberty Street, Suite 900, Reno, Nevada 89501\nAttorneys for Defendant Caldwell Freight Systems, LLC\nUNITED STATES DISTRICT COURT, NORTHERN DISTRICT OF CALIFORNIA. Case No. 4:25-cv-03318-JWQ.\nDEFENDANT CALDWELL FREIGHT SYSTEMS, LLC'S ANSWER AND AFFIRMATIVE DEFENSES TO COMPLAINT",
			"Defendant Caldwell Freight Systems, LLC (\"Caldwell\") answers the Complaint of Plaintiff Meridian Logistics, Inc. as follows. Except as expressly admitted below, Caldwell denies each allegation of the Complaint, including any allegation contained in headings or in the prayer for relief.",
		},
		AnswerTail: []string{
			"AFFIRMATIVE DEFENSES\nFIRST AFFIRMATIVE DEFENSE (Limitation of Liability). Any recovery is limited to $250,000 under Section 11.3 of the Agreement and 49 U.S.C. § 14706(c)(1)(A), because Meridian did not declare a value for the Shipment on the bill of lading and did not pay an excess valuation charge.",
			"SECOND AFFIRMATIVE DEFENSE (Act or Default of the Shipper). Any loss was caused by Meridian's own acts, including tendering product that had not been cooled to the required temperature before loading. THIRD AFFIRMATIVE DEFENSE (Failure to Mitigate). Meridian failed to mitigate its damages, including by failing to request stability testing of the product before it was destroyed.",
			"FOURTH AFFIRMATIVE DEFENSE (Preemption). Meridian's second and third claims are preempted by the Carmack Amendment, 49 U.S.C. § 14706, to the extent they seek damages for loss of or injury to goods in interstate transport. FIFTH AFFIRMATIVE DEFENSE (Failure to State a Claim). The Complaint fails to state a claim upon which relief can be granted.",
			"PRAYER\nCaldwell prays that Meridian take nothing by its Complaint, that judgment be entered for Caldwell, and for costs of suit.\nDated: May 20, 2025. PRUETT LOWE LLP, By: /s/ Gordon A. Pruett, Attorneys for Defendant Caldwell Freight Systems, LLC. Caldwell demands a jury on all issues so triable.",
		},
	}
}

func merDocs() []docSpec {
	return []docSpec{
		{ID: "d_mer_msa", Title: "Master Freight Services Agreement (Meridian–Caldwell)", Kind: "contract", Class: document,
			Party: merPlaintiff + " and " + merDefendant, Priv: none, Author: "Meridian Logistics, Inc.; Caldwell Freight Systems, LLC",
			Custodian: "Meridian Logistics, Inc. (Victor Osei)", Date: "2024-06-01", Pages: 16, Body: merMSA,
			Comment: "executed copy", Checked: "2025-04-02T21:14:09Z",
			Prior: []priorSpec{{Date: "2024-05-10", Pages: 15, Body: merMSADraft, Comment: "Carrier's draft circulated May 10, 2024"}}},
		{ID: "d_mer_bol", Title: "Bill of Lading No. CFS-884213 (Load MX-20417)", Kind: "bill_of_lading", Class: document,
			Party: merDefendant, Priv: none, Author: "Caldwell Freight Systems, LLC", Custodian: "Meridian Logistics, Inc.", Date: "2025-01-14", Pages: 2,
			Checked: "2025-04-02T21:16:40Z", Body: `STRAIGHT BILL OF LADING — NOT NEGOTIABLE
Bill of Lading No. CFS-884213. Date: January 14, 2025. Carrier: Caldwell Freight Systems, LLC, USDOT No. 2841177. Shipper: Meridian Logistics, Inc., 4100 Arch Road, Stockton, CA 95215. Consignee: Desert Valley Health Distribution, 2250 West Broadway Road, Tempe, AZ 85282. Shipper's load reference: MX-20417.

Description: 22 pallets, pharmaceutical product (biologic), Solano BioPharma lot SB-24-1187. KEEP REFRIGERATED. Handling: Pharma 2–8°C. Set point: 4.0°C. Reefer: CONTINUOUS. Trailer: 5317. Seal No. 4471290.

Shipper's declared value: NOT DECLARED. Subject to the terms of the Master Freight Services Agreement between Shipper and Carrier dated June 1, 2024.

Received in apparent good order, except as noted: none noted. Driver signature: /s/ T. Boone, 05:52, January 14, 2025. Shipper signature: /s/ L. Hartmann.

DELIVERY RECEIPT: Arrived 11:30, January 15, 2025. Seal No. 4471290 intact. Consignee exception: REFUSED — temperature excursion per logger, 22 of 22 pallets. Received by: /s/ R. Delgado, Desert Valley Health Distribution.`},
		{ID: "d_mer_reefer", Title: "Polarline TR-500 Unit Data Download, Trailer 5317 (January 14–15, 2025)", Kind: "data_report", Class: document,
			Party: merDefendant, Priv: none, Author: "Caldwell Maintenance", Custodian: "Caldwell Freight Systems, LLC", Date: "2025-02-20", Pages: 6,
			Body: `POLARLINE TR-500 UNIT DATA DOWNLOAD
Unit serial PL5-220419, mounted on Caldwell trailer 5317. Download performed February 20, 2025 by Caldwell Maintenance, Sparks, Nevada. Report interval: January 14, 2025 05:00 through January 15, 2025 12:00 (Pacific). Set point: 4.0°C throughout.

OPERATING MODE LOG
2025-01-14 05:31:07 UNIT ON — MODE: CYCLE-SENTRY
2025-01-14 05:31:07 SET POINT CHANGED 2.0°C TO 4.0°C
No mode change recorded between 05:31:07 on January 14 and 03:22:40 on January 15.

EVENT LOG, JANUARY 14
20:41:55 VEHICLE IGNITION OFF
21:05:12 CYCLE-SENTRY RESTART ATTEMPT — START FAILURE (LOW BATTERY 11.2 V)
21:05:14 ALARM 20 — FAILED TO START — UNIT SHUTDOWN
21:06:02 TELEMATICS ALERT TRANSMITTED: UNIT SHUTDOWN

TEMPERATURE LOG (RETURN AIR)
21:00 4.6°C | 21:17 8.1°C | 22:00 10.4°C | 23:00 12.3°C | 00:00 13.4°C | 01:00 13.9°C | 01:55 14.2°C (maximum) | 03:00 13.8°C | 03:30 11.6°C | 04:09 7.9°C | 05:00 4.3°C

EVENT LOG, JANUARY 15
03:22:40 UNIT START — MANUAL
03:22:41 MODE CHANGED: CYCLE-SENTRY TO CONTINUOUS
04:09:30 RETURN AIR WITHIN RANGE
11:24:09 DOOR OPEN (REAR)
No door-open event was recorded between 05:58 on January 14 and 11:24 on January 15.

FUEL AND BATTERY
Fuel level at 21:05:12 on January 14: 3/8 tank. Battery voltage at restart attempt: 11.2 V (minimum for cycle-sentry restart: 12.1 V). Fuel level at 03:22:40 on January 15: 3/8 tank.`},
		{ID: "d_mer_logger", Title: "ThermaTrace Logger Report, Serial TT4-00981 (Load MX-20417)", Kind: "data_report", Class: document,
			Party: merPlaintiff, Priv: none, Author: "Desert Valley Health Distribution (receiving)", Custodian: "Meridian Logistics, Inc.", Date: "2025-01-15", Pages: 4,
			Body: `THERMATRACE TT4 LOGGER REPORT
Serial TT4-00981. Started January 14, 2025 05:40 at Meridian Logistics, Stockton, and placed inside pallet 11 of 22, Load MX-20417. Alarm limits: low 2.0°C, high 8.0°C, single event high alarm delay 30 minutes.

SUMMARY
First reading: 4.9°C at 05:40, January 14. Time above 8.0°C: 7 hours 2 minutes (22:48 on January 14 to 05:50 on January 15). Maximum: 11.8°C at 03:40 on January 15. Alarm status: HIGH ALARM TRIGGERED at 23:18 on January 14.

READINGS (HOURLY EXTRACT)
05:40 4.9°C | 09:00 4.3°C | 13:00 4.2°C | 17:00 4.4°C | 21:00 4.8°C | 22:00 6.9°C | 23:00 8.6°C | 00:00 9.8°C | 01:00 10.7°C | 02:00 11.4°C | 03:00 11.7°C | 04:00 11.6°C | 05:00 9.2°C | 06:00 7.8°C | 09:00 5.1°C | 11:00 4.6°C

Report generated January 15, 2025 at 12:02 by Desert Valley Health Distribution receiving, Tempe, Arizona, and transmitted to Meridian Logistics and Solano BioPharma.`},
		{ID: "d_mer_dispatch", Title: "Email chain: Caldwell dispatch and Meridian re Load MX-20417 (January 15–17, 2025)", Kind: "email", Class: corresp,
			Party: merDefendant, Priv: none, Author: "Marcus Feld; Renee Salcido; Lena Hartmann", Custodian: "Caldwell Freight Systems, LLC (produced CFS-0004410)", Date: "2025-01-17", Pages: 4,
			Body: `From: Marcus Feld <mfeld@caldwellfreight.example>
To: Dispatch Team <dispatch@caldwellfreight.example>
Date: January 15, 2025 7:12 AM
Subject: 5317 / MX-20417 overnight
Saw the 5317 unit alert come in last night around 9 but I was on the phone with the Kingman breakdown for most of the night. I reached Boone at 3:10 and he got the unit restarted. Logger on that load is going to show it. Someone needs to call Meridian before they hear it from the consignee.

From: Renee Salcido <rsalcido@caldwellfreight.example>
To: Marcus Feld
Date: January 15, 2025 8:03 AM
Subject: RE: 5317 / MX-20417 overnight
Why was 5317 on cycle for a pharma load? The BOL says continuous. Pull the download and hold it for safety. Do not send anything to the customer until Doug has seen it.

From: Lena Hartmann <lhartmann@meridianlogistics.example>
To: Renee Salcido
Date: January 16, 2025 9:47 AM
Subject: Load MX-20417 — request for reefer download
Renee, please send the full reefer download for trailer 5317 for January 14–15, as required by Section 4.4 of our agreement. Desert Valley refused all 22 pallets and Solano has put the lot on hold.

From: Renee Salcido
To: Lena Hartmann
Date: January 17, 2025 4:55 PM
Subject: RE: Load MX-20417 — request for reefer download
Lena, we are reviewing the event internally and will share the unit data when that review is complete. Please direct any claim to claims@caldwellfreight.example.`},
		{ID: "d_mer_rejection", Title: "Desert Valley Health Distribution Receiving Exception Notice", Kind: "notice", Class: corresp,
			Party: "Desert Valley Health Distribution (non-party)", Priv: none, Author: "Rafael Delgado", Custodian: "Meridian Logistics, Inc.", Date: "2025-01-15", Pages: 2,
			Body: `DESERT VALLEY HEALTH DISTRIBUTION — RECEIVING EXCEPTION NOTICE
Date: January 15, 2025. Inbound reference: MX-20417 / BOL CFS-884213. Carrier: Caldwell Freight Systems, LLC, trailer 5317. Product: Solano BioPharma lot SB-24-1187, 22 pallets.

Disposition: REFUSED, 22 of 22 pallets. Reason: the ThermaTrace logger packed with pallet 11 shows a high alarm, with product temperature above 8.0°C for more than two hours. Under our quality agreement with Solano BioPharma we cannot receive product with an unresolved temperature excursion into inventory.

Seal No. 4471290 was intact on arrival and the trailer's display read 4.2°C at the door. The product remains on the trailer pending instructions from Solano BioPharma. Contact: Rafael Delgado, Receiving Supervisor.`},
		{ID: "d_mer_solano_claim", Title: "Letter from Solano BioPharma to Meridian: Notice of Claim (Lot SB-24-1187)", Kind: "letter", Class: corresp,
			Party: "Solano BioPharma, Inc. (non-party)", Priv: none, Author: "Karen Liu", Custodian: "Meridian Logistics, Inc.", Date: "2025-01-29", Pages: 3,
			Body: `SOLANO BIOPHARMA, INC.
600 Gateway Boulevard, Vacaville, California 95688
January 29, 2025. Via email and overnight courier.
Meridian Logistics, Inc., Attn: Claims Department, 4100 Arch Road, Stockton, CA 95215
Re: Notice of Claim — Lot SB-24-1187, Meridian load MX-20417

Solano's Quality Assurance department has reviewed the temperature data for the above lot. Under Solano SOP QA-114, product exposed to temperatures above 8°C for more than two cumulative hours must be destroyed; stability data do not support release after a longer excursion. The logger data show 7 hours and 2 minutes above 8°C. Solano has therefore ordered destruction of the entire lot.

Under Section 12 of the Warehousing and Distribution Agreement, Meridian is responsible for loss of product while in the custody of Meridian or its carriers. Solano claims $1,284,600, the invoice value of the destroyed product, and $38,250 in disposal, documentation and replacement-freight costs, a total of $1,322,850.

Please confirm within fifteen days that Meridian accepts this claim. Sincerely, Karen Liu, Director of Quality Assurance and Supply Chain, Solano BioPharma, Inc.`},
		{ID: "d_mer_claim_notice", Title: "Meridian's Notice of Cargo Claim to Caldwell (49 C.F.R. § 370.3)", Kind: "letter", Class: corresp,
			Party: merPlaintiff, Priv: none, Author: "Lena Hartmann", Custodian: "Meridian Logistics, Inc.", Date: "2025-02-03", Pages: 3,
			Body: `MERIDIAN LOGISTICS, INC.
February 3, 2025. Via email and certified mail.
Caldwell Freight Systems, LLC, Attn: Claims, 1450 Glendale Avenue, Sparks, NV 89431
Re: Cargo claim — BOL CFS-884213, trailer 5317, Meridian load MX-20417

Meridian submits this written claim under 49 C.F.R. § 370.3 and Section 8 of the Master Freight Services Agreement for the loss of the entire shipment tendered to Caldwell on January 14, 2025. The claim amount is $1,322,850, consisting of the invoice value of the product, $1,284,600, and disposal and replacement-freight costs of $38,250. Supporting documents are enclosed.

Meridian also demands indemnity under Section 9.2 of the Agreement for all amounts it pays to Solano BioPharma. We again ask Caldwell to furnish the complete refrigeration unit download for trailer 5317, which we requested on January 16, 2025 and have not received.
Very truly yours, Lena Hartmann, Director of Transportation.`},
		{ID: "d_mer_claim_decline", Title: "Caldwell's Claim Declination Letter", Kind: "letter", Class: corresp,
			Party: merDefendant, Priv: none, Author: "Renee Salcido", Custodian: "Meridian Logistics, Inc.", Date: "2025-03-05", Pages: 2,
			Body: `CALDWELL FREIGHT SYSTEMS, LLC
March 5, 2025
Meridian Logistics, Inc., Attn: Lena Hartmann
Re: Your claim dated February 3, 2025 — BOL CFS-884213

Caldwell has completed its investigation. Our review indicates that product on at least three pallets was loaded above the 8°C limit, that the product was not pre-conditioned to the set point before loading, and that the loss was caused in whole or in part by the shipper. Caldwell therefore declines the claim.

Without admitting liability, and in full and final settlement, Caldwell tenders $250,000, which is the limit of Caldwell's liability under Section 11.3 of the Agreement because no value was declared on the bill of lading. The unit download for trailer 5317 was furnished to you on February 21, 2025.
Sincerely, Renee Salcido, Director of Safety and Claims.`},
		{ID: "d_mer_rfa_resp", Title: "Caldwell's Responses to Meridian's First Set of Requests for Admission", Kind: "discovery_response", Class: discovery,
			Party: merDefendant, Priv: none, Author: "Gordon A. Pruett, Pruett Lowe LLP", Custodian: "Hale & Ortiz LLP", Date: "2025-09-12", Pages: 9,
			Checked: "2025-09-15T18:31:52Z",
			Body: `DEFENDANT CALDWELL FREIGHT SYSTEMS, LLC'S RESPONSES TO PLAINTIFF'S FIRST SET OF REQUESTS FOR ADMISSION
Propounding party: Plaintiff Meridian Logistics, Inc. Responding party: Defendant Caldwell Freight Systems, LLC. Set No.: One. Caldwell responds under Federal Rule of Civil Procedure 36 as follows.

REQUEST FOR ADMISSION NO. 1: Admit that the bill of lading for the Shipment states "Reefer: CONTINUOUS." RESPONSE TO REQUEST FOR ADMISSION NO. 1: Admitted.
REQUEST FOR ADMISSION NO. 2: Admit that the refrigeration unit of trailer 5317 was in cycle-sentry mode from 05:31 on January 14, 2025 until 03:22 on January 15, 2025. RESPONSE TO REQUEST FOR ADMISSION NO. 2: Caldwell objects that the request is compound. Subject to that objection, Caldwell admits that the unit's data download records no mode change between those times and otherwise denies the request.

REQUEST FOR ADMISSION NO. 3: Admit that Caldwell's telematics system transmitted a unit-shutdown alert for trailer 5317 to Caldwell's dispatch office at 21:06 on January 14, 2025. RESPONSE TO REQUEST FOR ADMISSION NO. 3: Admitted.
REQUEST FOR ADMISSION NO. 4: Admit that no Caldwell employee contacted the driver of trailer 5317 between 21:06 on January 14, 2025 and 03:00 on January 15, 2025. RESPONSE TO REQUEST FOR ADMISSION NO. 4: After a reasonable inquiry, the information Caldwell knows or can readily obtain is insufficient to enable it to admit or deny this request, because dispatch telephone records for that night are still being collected.

REQUEST FOR ADMISSION NO. 5: Admit that Caldwell did not furnish the refrigeration unit download for trailer 5317 to Meridian within 48 hours of Meridian's request of January 16, 2025. RESPONSE TO REQUEST FOR ADMISSION NO. 5: Admitted.
REQUEST FOR ADMISSION NO. 6: Admit that Caldwell did not pre-cool trailer 5317 before it was presented for loading on January 14, 2025. RESPONSE TO REQUEST FOR ADMISSION NO. 6: Denied.

REQUEST FOR ADMISSION NO. 7: Admit that the seal on trailer 5317 was intact when the Shipment arrived in Tempe, Arizona. RESPONSE TO REQUEST FOR ADMISSION NO. 7: Admitted.
REQUEST FOR ADMISSION NO. 8: Admit that the loss of the Shipment was caused by a failure of the refrigeration unit of trailer 5317. RESPONSE TO REQUEST FOR ADMISSION NO. 8: Denied.

Dated: September 12, 2025. PRUETT LOWE LLP, By: /s/ Gordon A. Pruett, Attorneys for Defendant. VERIFICATION: I, Renee Salcido, am the Director of Safety and Claims of Caldwell Freight Systems, LLC and am authorized to make this verification. I declare under penalty of perjury that the foregoing responses are true and correct to the best of my knowledge.`},
		{ID: "d_mer_rog_resp", Title: "Caldwell's Responses to Meridian's First Set of Interrogatories", Kind: "discovery_response", Class: discovery,
			Party: merDefendant, Priv: none, Author: "Gordon A. Pruett, Pruett Lowe LLP", Custodian: "Hale & Ortiz LLP", Date: "2025-09-12", Pages: 12,
			Body: `DEFENDANT CALDWELL FREIGHT SYSTEMS, LLC'S RESPONSES TO PLAINTIFF'S FIRST SET OF INTERROGATORIES
Caldwell responds under Federal Rule of Civil Procedure 33. Caldwell's investigation is continuing and it reserves the right to supplement these responses.

INTERROGATORY NO. 1: Identify each person on duty in Caldwell's dispatch office between 20:00 on January 14, 2025 and 06:00 on January 15, 2025. RESPONSE TO INTERROGATORY NO. 1: One night-shift dispatcher, Marcus Feld, was on duty and was responsible for monitoring 143 tractors during that shift.

INTERROGATORY NO. 2: State all facts supporting your contention that the Shipment was tendered above the Temperature Range. RESPONSE TO INTERROGATORY NO. 2: Caldwell contends that three pallets of the Shipment, positions 19 through 21, had pulp temperatures of approximately 9.1°C when loaded, based on the driver's recollection of a reading shown to him on the dock.

INTERROGATORY NO. 3: Describe the training Travis Boone received on the operation of refrigeration units. RESPONSE TO INTERROGATORY NO. 3: Mr. Boone completed Caldwell's Temperature-Controlled Loads training module on March 8, 2023. The training module addresses unit mode selection for pharmaceutical loads and the response to unit alarms.

INTERROGATORY NO. 4: State the date on which you furnished the refrigeration unit download for trailer 5317 to Meridian and explain any delay. RESPONSE TO INTERROGATORY NO. 4: Caldwell produced the download to Meridian on February 21, 2025, after completing its internal review of the event. Caldwell's safety department held the download during that review under its standard incident procedure.

INTERROGATORY NO. 5: State the amount of the loss you contend Meridian may recover. RESPONSE TO INTERROGATORY NO. 5: Caldwell contends that any recovery is limited to $250,000 under Section 11.3 of the Agreement. Caldwell further contends that the invoice value of the product overstates Solano's actual loss, because Solano's replacement cost for lot SB-24-1187 was lower than its invoice price to its customer.

INTERROGATORY NO. 6: Identify each battery replacement or repair performed on the refrigeration unit of trailer 5317 between January 1, 2024 and March 31, 2025. RESPONSE TO INTERROGATORY NO. 6: Caldwell's maintenance records show a battery load test on October 2, 2024, which the unit passed, and replacement of the unit battery on January 22, 2025.

Dated: September 12, 2025. PRUETT LOWE LLP, By: /s/ Gordon A. Pruett. Verified by Renee Salcido, Director of Safety and Claims.`},
		{ID: "d_mer_depo_boone", Title: "Deposition of Travis Boone (Excerpts)", Kind: "deposition_transcript", Class: deposition,
			Party: merDefendant + " (witness Travis Boone)", Priv: none, Author: "Alicia Moreno, CSR No. 13307", Custodian: "Hale & Ortiz LLP", Date: "2026-02-18", Pages: 24,
			Body: `DEPOSITION OF TRAVIS BOONE — EXCERPTS
Taken February 18, 2026, at the offices of Hale & Ortiz LLP, Oakland, California. Examination by Dana Whitfield for Plaintiff; Gordon A. Pruett defending. Reported by Alicia Moreno, CSR No. 13307.

Q. How long have you driven for Caldwell?
A. Six years this coming April.
Q. Before you left Stockton on January 14, did you check the mode the reefer unit was running in?
A. I didn't look at the mode. I looked at the set point. It said four degrees, and that's what the paperwork said.

Q. Do you know what the trailer hauled before your load?
A. I think it had lettuce on it before. Produce we run on cycle.
Q. Did anyone tell you the unit should be in continuous mode for this load?
A. Not that I remember. Nobody said anything at the dock.

Q. At the Meridian dock, were you shown pulp temperatures for the pallets?
A. The lady had a probe and a clipboard. She showed me some numbers.
Q. Do you remember any of the numbers?
A. Not really. I remember they were all under eight, or I wouldn't have signed.

Q. Where did you stop for your ten-hour break?
A. Barstow, the truck stop on Lenwood Road. I shut the truck down at about twenty to nine.
Q. Did you check the reefer before you went to sleep?
A. It was running and it was reading four point something. I went to the sleeper.

Q. When did you first learn the unit had shut down?
A. The first call I got was a little after three in the morning. Marcus from dispatch.
Q. Was your phone on?
A. Yes. It was on the charger right next to me. Nobody called before that.

Q. What did you do after Marcus called?
A. I went out and the unit was dead, showing a start failure. I got it going with the jump pack and I put it on continuous, because Marcus said to.
Q. What time was that?
A. Around three twenty.

Q. Do you recall the training on temperature-controlled loads you took in 2023?
A. It was a video on the tablet. I remember the part about pre-trip and about alarms.
Q. Do you remember anything in it about continuous versus cycle mode?
A. I don't remember anything about continuous mode in that training.

Q. Did you add fuel to the reefer at any point on the trip?
A. No. It had plenty. Better than a quarter tank.
Q. When you delivered in Tempe, what happened?
A. They opened it up, pulled the logger, and refused the whole load. The seal was good.

(Whereupon, the excerpted portion of the deposition concluded.) REPORTER'S CERTIFICATE: I, Alicia Moreno, CSR No. 13307, certify that the foregoing is a true record of the testimony given.`},
		{ID: "d_mer_depo_hartmann", Title: "Deposition of Lena Hartmann (Excerpts)", Kind: "deposition_transcript", Class: deposition,
			Party: merPlaintiff + " (witness Lena Hartmann)", Priv: none, Author: "Thomas Greer, CCR No. 482", Custodian: "Hale & Ortiz LLP", Date: "2026-03-10", Pages: 20,
			Body: `DEPOSITION OF LENA HARTMANN — EXCERPTS
Taken March 10, 2026, at the offices of Pruett Lowe LLP, Reno, Nevada. Examination by Gordon A. Pruett for Defendant; Dana Whitfield defending. Reported by Thomas Greer, CCR No. 482.

Q. What is your position at Meridian?
A. Director of Transportation. I manage our carrier relationships and the outbound dock in Stockton.
Q. Were you on the dock when load MX-20417 was loaded?
A. Yes. I probed the pallets myself because it was a Solano pharma load.

Q. What pulp temperatures did you record?
A. Every pallet was between 4.6 and 5.8 degrees. I wrote them on the loading checklist and the driver initialed it.
Q. Do you have that checklist?
A. It should be in the load file. I gave the file to our claims group.

Q. Was trailer 5317 cold when it backed in?
A. The display said 4.1. I didn't check the mode. That's the carrier's job under the contract, and the bill of lading says continuous.
Q. Who prepared the bill of lading?
A. Caldwell's system generates it from our tender. The continuous instruction comes from our tender template for every pharma load.

Q. Did Meridian ask Solano to test the product before it was destroyed?
A. We asked. Solano told us testing wasn't an option for a product with that excursion. Their SOP doesn't allow release after more than two hours above eight.
Q. Did Meridian pay Solano's claim?
A. We paid Solano the full amount on March 14. One million three hundred twenty-two thousand, eight hundred fifty dollars.

Q. Why didn't Meridian declare a value on the bill of lading?
A. We never do under this contract. The continuous-mode exception was the reason we agreed to the $250,000 cap. We negotiated that in May of 2024.
Q. Who negotiated it?
A. I did, with Doug Caldwell.

(Whereupon, the excerpted portion of the deposition concluded.) REPORTER'S CERTIFICATE: I, Thomas Greer, CCR No. 482, certify that the foregoing is a true record of the testimony given.`},
		{ID: "d_mer_expert_reyes", Title: "Expert Report of Alan Reyes, Ph.D.", Kind: "expert_report", Class: expert,
			Party: merPlaintiff + " (expert Alan Reyes, Ph.D.)", Priv: none, Author: "Alan Reyes, Ph.D., Reyes Cold Chain Consulting", Custodian: "Hale & Ortiz LLP",
			Date: "2026-07-10", Pages: 22, Body: merReyes, Comment: "errata of July 10, 2026: fuel level corrected in Opinion 3",
			Checked: "2026-07-14T20:02:37Z",
			Prior:   []priorSpec{{Date: "2026-06-26", Pages: 22, Body: merReyesServed, Comment: "as served June 26, 2026"}}},
		{ID: "d_mer_damages_memo", Title: "Damages Analysis and the Section 11.4 Exception (Memorandum)", Kind: "memo", Class: document,
			Party: merCounsel, Priv: wp, Author: "Dana Whitfield", Custodian: "Hale & Ortiz LLP", Date: "2026-07-28", Pages: 6,
			Body: `PRIVILEGED AND CONFIDENTIAL — ATTORNEY WORK PRODUCT
MEMORANDUM
To: File, Meridian v. Caldwell. From: Dana Whitfield. Date: July 28, 2026.
Re: Damages analysis and the Section 11.4 exception

Recoverable damages if the Section 11.4 exception applies are $1,322,850, the amount Meridian paid Solano on March 14, 2025, plus prejudgment interest. If the exception does not apply, Caldwell's liability under Section 11.3 is capped at $250,000 and our Carmack claim adds nothing above the cap because no value was declared.

The strongest route around the cap is Section 4.2: Caldwell's own bill of lading says "Reefer: CONTINUOUS," its download shows cycle-sentry mode for the whole trip, and RFA No. 2 effectively concedes the point. Section 4.3 is a second route: the telematics alert at 21:06 went unanswered for roughly six hours, which is not a thirty-minute response.

Interest: at the California statutory rate of 10 percent under Civil Code section 3289, interest on $1,322,850 from March 14, 2025 to October 31, 2026 is approximately $216,000. Federal courts applying Carmack have discretion over prejudgment interest, so this figure should be presented as a range in mediation.

Risk: Caldwell's valuation argument (Interrogatory No. 5) could reduce the loss to Solano's replacement cost, which we estimate at $910,000 to $980,000 based on Solano's cost data produced in August. Caldwell's pre-cooling defense is weak after Boone testified that every reading he was shown was under eight degrees.

Recommendation: do not accept less than $1,050,000 at mediation without client authority; request authority of $900,000 as a floor only if Caldwell's insurer commits funds above the cap before the mediation session.`},
		{ID: "d_mer_client_email", Title: "Email from Victor Osei re mediation authority", Kind: "email", Class: corresp,
			Party: merPlaintiff, Priv: priv, Author: "Victor Osei", Custodian: "Hale & Ortiz LLP", Date: "2026-08-19", Pages: 2,
			Body: `PRIVILEGED & CONFIDENTIAL — ATTORNEY-CLIENT COMMUNICATION
From: Victor Osei <vosei@meridianlogistics.example>
To: Dana Whitfield <dana.whitfield@haleortiz.example>
Date: August 19, 2026 6:42 PM
Subject: Mediation authority

Dana — the board met this afternoon and authorized settlement of up to $900,000 at the December mediation, with anything below $1,000,000 to come back to me first. They want the Solano relationship protected; Solano told us last week it will rebid its distribution contract in 2027. Please keep that out of any mediation brief. — Victor`},
		{ID: "d_mer_sched_order", Title: "Case Management and Scheduling Order", Kind: "order", Class: document,
			Party: "the Court", Priv: none, Author: "United States District Court, N.D. Cal.", Custodian: "Hale & Ortiz LLP", Date: "2025-07-15", Pages: 5,
			Checked: "2025-07-16T16:44:21Z",
			Body: `UNITED STATES DISTRICT COURT, NORTHERN DISTRICT OF CALIFORNIA
MERIDIAN LOGISTICS, INC., Plaintiff, v. CALDWELL FREIGHT SYSTEMS, LLC, Defendant. Case No. 4:25-cv-03318-JWQ
CASE MANAGEMENT AND SCHEDULING ORDER
Following the Case Management Conference of July 10, 2025, the Court sets the following schedule under Federal Rule of Civil Procedure 16(b). Dates may be changed only by order of the Court on a showing of good cause.

1. Close of fact discovery: April 30, 2026.
2. Opening expert disclosures under Rule 26(a)(2): June 26, 2026.
3. Rebuttal expert disclosures: July 24, 2026.
4. Close of expert discovery: September 18, 2026.

5. Last day to file dispositive motions: October 29, 2026. Oppositions and replies are due as provided in Civil Local Rule 7-3.
6. Last day to hear dispositive motions: December 10, 2026 at 2:00 p.m.

7. The parties shall complete mediation under ADR Local Rule 6 no later than December 4, 2026.
8. Final pretrial conference: February 22, 2027 at 3:00 p.m. Joint pretrial statement due February 5, 2027.
9. Jury trial: March 15, 2027 at 8:30 a.m. Estimated length: 6 court days.

IT IS SO ORDERED. Dated: July 15, 2025. United States District Judge.`},
	}
}

func merFacts() []factSpec {
	confirmed := []chkSpec{{Days: 3, Result: records.CheckConfirmed}}
	return []factSpec{
		{ID: "f_mer_001", S: "Meridian and Caldwell entered into the Master Freight Services Agreement effective June 1, 2024.", P: admitted,
			Pl: "On June 1, 2024, Meridian and Caldwell entered into a Master Freight Services Agreement",
			C:  []cite{{Doc: "d_mer_msa", Q: "This Master Freight Services Agreement is entered into as of June 1, 2024"}}, Chk: confirmed},
		{ID: "f_mer_002", S: "Section 4.2 of the Agreement requires Caldwell to run the refrigeration unit in continuous-run mode, not start-stop or cycle mode, for every load designated \"Pharma 2–8°C\".", P: undisputed,
			Pl: "Section 4.2 of the Agreement requires Caldwell to operate the refrigeration unit of each trailer in continuous-run mode",
			C:  []cite{{Doc: "d_mer_msa", Q: "4.2 Carrier shall operate the refrigeration unit of each trailer in continuous-run mode, and not in any start-stop or cycle mode, for every load designated \"Pharma 2–8°C\" on the bill of lading."}}, Chk: confirmed},
		{ID: "f_mer_003", S: "Section 9.2 of the Agreement obliges Caldwell to indemnify Meridian for losses, including payments to Meridian's customers, arising from a failure to maintain the temperature range.", P: undisputed,
			Pl: "Section 9.2 of the Agreement requires Caldwell to indemnify Meridian for all losses",
			C:  []cite{{Doc: "d_mer_msa", Q: "9.2 Carrier shall indemnify Shipper for all losses, including amounts Shipper pays to its customers, arising from Carrier's failure to maintain the Temperature Range for a Load."}}},
		{ID: "f_mer_004", S: "Section 11.3 caps Caldwell's liability at $250,000 per shipment unless Meridian declares a higher value on the bill of lading and pays the excess valuation charge.", P: undisputed,
			C: []cite{{Doc: "d_mer_msa", Q: "Carrier's liability for loss of or damage to a Load shall not exceed $250,000 per shipment unless Shipper declares a higher value on the bill of lading"},
				{Doc: "d_mer_answer", Q: "Any recovery is limited to $250,000 under Section 11.3 of the Agreement and 49 U.S.C. § 14706(c)(1)(A)"}}},
		{ID: "f_mer_005", S: "Section 11.4 lifts the Section 11.3 cap for loss caused by Caldwell's failure to comply with Section 4.2 (continuous-run mode) or Section 4.3 (alarm response).", P: undisputed,
			Pl: "Section 11.4 of the Agreement provides that the limitation of liability in Section 11.3 does not apply",
			C:  []cite{{Doc: "d_mer_msa", Q: "11.4 The limitation in Section 11.3 does not apply to loss or damage caused by Carrier's gross negligence or willful misconduct, or by Carrier's failure to comply with Section 4.2 or Section 4.3."}}},
		{ID: "f_mer_006", S: "Caldwell's May 10, 2024 draft of the Agreement capped liability at $100,000 and had no exception for the continuous-run duty; the executed Agreement raised the cap to $250,000 and added the Section 4.2 and 4.3 exception.", P: undisputed,
			C: []cite{{Doc: "d_mer_msa", V: 1, Q: "shall not exceed $100,000 per shipment"},
				{Doc: "d_mer_msa", V: 1, Q: "11.4 The limitation in Section 11.3 does not apply to loss or damage caused by Carrier's gross negligence or willful misconduct."},
				{Doc: "d_mer_depo_hartmann", Q: "The continuous-mode exception was the reason we agreed to the $250,000 cap. We negotiated that in May of 2024."}}},
		{ID: "f_mer_007", S: "Section 4.4 requires Caldwell to furnish a complete refrigeration unit download within 48 hours of Meridian's request.", P: undisputed,
			C: []cite{{Doc: "d_mer_msa", Q: "shall furnish a complete download to Shipper within forty-eight (48) hours of Shipper's request"}}},
		{ID: "f_mer_008", S: "Section 6.1 puts the duty to pre-cool the trailer to set point before loading on Caldwell; Section 6.2 requires Meridian to load product within range and record pulp temperatures.", P: undisputed,
			C: []cite{{Doc: "d_mer_msa", Q: "6.1 Carrier shall pre-cool each trailer to the set point before it is presented for loading."}}},
		{ID: "f_mer_009", S: "On January 14, 2025, Caldwell received 22 pallets from Meridian at Stockton for delivery to Desert Valley Health Distribution in Tempe, Arizona.", P: admitted,
			Pl: "On January 14, 2025, Meridian tendered to Caldwell at its Stockton facility a shipment of 22 pallets",
			C:  []cite{{Doc: "d_mer_bol", Q: "Description: 22 pallets, pharmaceutical product (biologic), Solano BioPharma lot SB-24-1187."}}},
		{ID: "f_mer_010", S: "Bill of Lading CFS-884213 designates the load \"Pharma 2–8°C\" and instructs \"Reefer: CONTINUOUS\".", P: admitted,
			Pl: "The bill of lading designates the Shipment \"Pharma 2–8°C\" and states \"Reefer: CONTINUOUS.\"",
			C: []cite{{Doc: "d_mer_bol", Q: "Handling: Pharma 2–8°C. Set point: 4.0°C. Reefer: CONTINUOUS."},
				{Doc: "d_mer_rfa_resp", Q: "RESPONSE TO REQUEST FOR ADMISSION NO. 1: Admitted."}}, Chk: confirmed},
		{ID: "f_mer_011", S: "Meridian did not declare a value for the shipment on the bill of lading.", P: undisputed,
			C: []cite{{Doc: "d_mer_bol", Q: "Shipper's declared value: NOT DECLARED."},
				{Doc: "d_mer_depo_hartmann", Q: "We never do under this contract."}}},
		{ID: "f_mer_012", S: "The product was within 2–8°C when tendered to Caldwell.", P: disputed,
			Pl: "The Shipment was tendered to Caldwell in good order and condition, at a product temperature within the 2°C to 8°C range.",
			C: []cite{{Doc: "d_mer_depo_hartmann", Q: "Every pallet was between 4.6 and 5.8 degrees."},
				{Doc: "d_mer_rog_resp", Q: "Caldwell contends that three pallets of the Shipment, positions 19 through 21, had pulp temperatures of approximately 9.1°C when loaded"}},
			Prop: &propSpec{P: undisputed, Why: "The driver testified every reading he was shown was under eight degrees, which appears to abandon Caldwell's contention."}},
		{ID: "f_mer_013", S: "Travis Boone departed Stockton with the load at about 6:10 a.m. on January 14, 2025, in Caldwell trailer 5317.", P: admitted,
			Pl: "Caldwell's driver, Travis Boone, departed Stockton with the Shipment at approximately 6:10 a.m. on January 14, 2025"},
		{ID: "f_mer_014", S: "The refrigeration unit on trailer 5317 ran in cycle-sentry (start-stop) mode from loading until 03:22 on January 15, 2025.", P: disputed,
			Pl: "The refrigeration unit on trailer 5317 was set to operate in cycle-sentry (start-stop) mode, not continuous-run mode",
			C: []cite{{Doc: "d_mer_reefer", Q: "No mode change recorded between 05:31:07 on January 14 and 03:22:40 on January 15."},
				{Doc: "d_mer_rfa_resp", Q: "Caldwell admits that the unit's data download records no mode change between those times and otherwise denies the request."}},
			Prop: &propSpec{P: admitted, Why: "Caldwell's answer to Paragraph 13 and its response to RFA No. 2 together concede cycle-sentry mode for the whole period."}},
		{ID: "f_mer_015", S: "Boone did not check the unit's operating mode before leaving Stockton; he checked only the set point.", P: undisputed,
			C:    []cite{{Doc: "d_mer_depo_boone", Q: "I didn't look at the mode. I looked at the set point."}},
			Prop: &propSpec{P: admitted, Why: "The testimony of Caldwell's own driver is an admission by a party's employee."}},
		{ID: "f_mer_016", S: "Trailer 5317's previous load was produce, which Caldwell runs in cycle mode.", P: unresolved,
			C: []cite{{Doc: "d_mer_depo_boone", Q: "I think it had lettuce on it before. Produce we run on cycle."},
				{Doc: "d_mer_reefer", Q: "SET POINT CHANGED 2.0°C TO 4.0°C"}}},
		{ID: "f_mer_017", S: "Boone parked trailer 5317 at a Barstow truck stop at about 8:40 p.m. on January 14, 2025, for a ten-hour break.", P: admitted,
			Pl: "At approximately 8:40 p.m. on January 14, 2025, Mr. Boone parked trailer 5317 at a truck stop in Barstow, California",
			C:  []cite{{Doc: "d_mer_depo_boone", Q: "Barstow, the truck stop on Lenwood Road. I shut the truck down at about twenty to nine."}}},
		{ID: "f_mer_018", S: "The refrigeration unit stopped at about 9:05 p.m. on January 14, 2025.", P: admitted,
			Pl: "At 9:05 p.m., the refrigeration unit shut down",
			C:  []cite{{Doc: "d_mer_reefer", Q: "21:05:14 ALARM 20 — FAILED TO START — UNIT SHUTDOWN"}}},
		{ID: "f_mer_019", S: "The unit stopped because an automatic cycle-sentry restart failed on a low battery (11.2 V against the 12.1 V required).", P: disputed,
			C: []cite{{Doc: "d_mer_reefer", Q: "21:05:12 CYCLE-SENTRY RESTART ATTEMPT — START FAILURE (LOW BATTERY 11.2 V)"},
				{Doc: "d_mer_expert_reyes", Q: "The unit on trailer 5317 attempted an automatic restart at 21:05:12 with a battery voltage of 11.2 V, below the 12.1 V the unit requires, and failed to start."},
				{Doc: "d_mer_answer", Q: "denies that the stop was caused by the unit's operating mode"}}},
		{ID: "f_mer_020", S: "Caldwell's telematics system sent a unit-shutdown alert to its dispatch office at 9:06 p.m. on January 14, 2025.", P: admitted,
			Pl: "Caldwell's telematics system transmitted a unit-shutdown alert to Caldwell's dispatch office at 9:06 p.m.",
			C: []cite{{Doc: "d_mer_rfa_resp", Q: "RESPONSE TO REQUEST FOR ADMISSION NO. 3: Admitted."},
				{Doc: "d_mer_reefer", Q: "21:06:02 TELEMATICS ALERT TRANSMITTED: UNIT SHUTDOWN"}},
			Prop: &propSpec{P: denied, Why: "Caldwell's answer denies Paragraph 16."}, Chk: confirmed},
		{ID: "f_mer_021", S: "No one at Caldwell contacted Boone about the alert until 3:10 a.m. on January 15, 2025.", P: disputed,
			Pl: "No one at Caldwell contacted Mr. Boone about the alert until 3:10 a.m. on January 15, 2025",
			C: []cite{{Doc: "d_mer_depo_boone", Q: "The first call I got was a little after three in the morning. Marcus from dispatch."},
				{Doc: "d_mer_dispatch", Q: "I reached Boone at 3:10 and he got the unit restarted."}}},
		{ID: "f_mer_022", S: "One night-shift dispatcher, Marcus Feld, was monitoring 143 tractors on the night of January 14, 2025.", P: undisputed,
			C: []cite{{Doc: "d_mer_rog_resp", Q: "One night-shift dispatcher, Marcus Feld, was on duty and was responsible for monitoring 143 tractors during that shift."}}},
		{ID: "f_mer_023", S: "Return-air temperature exceeded 8°C from 9:17 p.m. on January 14 to 4:09 a.m. on January 15, 2025, peaking at 14.2°C.", P: disputed,
			Pl: "The return-air temperature in trailer 5317 exceeded 8°C from 9:17 p.m. on January 14 until 4:09 a.m. on January 15, 2025",
			C: []cite{{Doc: "d_mer_reefer", Q: "01:55 14.2°C (maximum)"},
				{Doc: "d_mer_expert_reyes", Q: "The return-air temperature exceeded 8°C from 21:17 on January 14 until 04:09 on January 15, a period of 6 hours and 52 minutes, and reached 14.2°C at 01:55."}},
			Chk: []chkSpec{{Days: 4, Result: records.CheckRefuted, Method: "Peak temperature compared with the ThermaTrace logger report", Note: "The logger shows 11.8°C at product level; 14.2°C is return air. Statement needs to say return air."}}},
		{ID: "f_mer_024", S: "The logger inside pallet 11 recorded product temperature above 8°C for 7 hours 2 minutes, with a maximum of 11.8°C.", P: undisputed,
			C: []cite{{Doc: "d_mer_logger", Q: "Time above 8.0°C: 7 hours 2 minutes (22:48 on January 14 to 05:50 on January 15). Maximum: 11.8°C at 03:40 on January 15."},
				{Doc: "d_mer_expert_reyes", Q: "the logger inside pallet 11 recorded 7 hours and 2 minutes above 8°C with a maximum of 11.8°C"}}},
		{ID: "f_mer_025", S: "Boone restarted the unit manually at 3:22 a.m. on January 15, 2025, and switched it to continuous mode.", P: undisputed,
			C: []cite{{Doc: "d_mer_reefer", Q: "03:22:41 MODE CHANGED: CYCLE-SENTRY TO CONTINUOUS"},
				{Doc: "d_mer_depo_boone", Q: "I got it going with the jump pack and I put it on continuous, because Marcus said to."}}},
		{ID: "f_mer_026", S: "The trailer's rear door was not opened between Stockton and delivery in Tempe, and the seal was intact on arrival.", P: undisputed,
			C: []cite{{Doc: "d_mer_reefer", Q: "No door-open event was recorded between 05:58 on January 14 and 11:24 on January 15."},
				{Doc: "d_mer_rfa_resp", Q: "RESPONSE TO REQUEST FOR ADMISSION NO. 7: Admitted."}}},
		{ID: "f_mer_027", S: "Desert Valley Health Distribution refused all 22 pallets on January 15, 2025 because of the logger's high alarm.", P: unresolved,
			Pl:   "On January 15, 2025, Desert Valley Health Distribution rejected all 22 pallets of the Shipment",
			C:    []cite{{Doc: "d_mer_rejection", Q: "Disposition: REFUSED, 22 of 22 pallets."}},
			Prop: &propSpec{P: undisputed, Why: "The consignee's exception notice and the delivery receipt both record the refusal, and Caldwell offers nothing contrary."}},
		{ID: "f_mer_028", S: "Solano ordered destruction of the entire lot under its SOP QA-114.", P: unresolved,
			Pl: "Under its quality procedures, Solano ordered the destruction of the entire Shipment.",
			C:  []cite{{Doc: "d_mer_solano_claim", Q: "Solano has therefore ordered destruction of the entire lot."}}},
		{ID: "f_mer_029", S: "Solano SOP QA-114 requires destruction of product exposed above 8°C for more than two cumulative hours.", P: undisputed,
			C: []cite{{Doc: "d_mer_solano_claim", Q: "Under Solano SOP QA-114, product exposed to temperatures above 8°C for more than two cumulative hours must be destroyed"}}},
		{ID: "f_mer_030", S: "Solano demanded $1,322,850 from Meridian.", P: unresolved,
			Pl: "Solano demanded that Meridian pay $1,322,850",
			C:  []cite{{Doc: "d_mer_solano_claim", Q: "a total of $1,322,850"}}},
		{ID: "f_mer_031", S: "The loss consists of $1,284,600 in product invoice value and $38,250 in disposal, documentation and replacement-freight costs.", P: disputed,
			C: []cite{{Doc: "d_mer_solano_claim", Q: "Solano claims $1,284,600, the invoice value of the destroyed product, and $38,250 in disposal, documentation and replacement-freight costs"},
				{Doc: "d_mer_rog_resp", Q: "the invoice value of the product overstates Solano's actual loss"}}},
		{ID: "f_mer_032", S: "Meridian paid Solano $1,322,850 on March 14, 2025.", P: unresolved,
			Pl:   "On March 14, 2025, Meridian paid Solano $1,322,850",
			C:    []cite{{Doc: "d_mer_depo_hartmann", Q: "We paid Solano the full amount on March 14."}},
			Prop: &propSpec{P: undisputed, Why: "Hartmann's testimony is uncontradicted and Caldwell has not served contrary evidence."}},
		{ID: "f_mer_033", S: "Meridian submitted a written cargo claim to Caldwell for $1,322,850 on February 3, 2025.", P: admitted,
			Pl: "On February 3, 2025, Meridian submitted a written claim to Caldwell",
			C:  []cite{{Doc: "d_mer_claim_notice", Q: "The claim amount is $1,322,850"}}},
		{ID: "f_mer_034", S: "Caldwell declined the claim on March 5, 2025 and tendered $250,000 as the limit of its liability.", P: admitted,
			Pl: "On March 5, 2025, Caldwell declined Meridian's claim in writing",
			C:  []cite{{Doc: "d_mer_claim_decline", Q: "Caldwell tenders $250,000, which is the limit of Caldwell's liability under Section 11.3 of the Agreement"}}},
		{ID: "f_mer_035", S: "Caldwell's declination blamed the loss on product loaded above 8°C on at least three pallets.", P: undisputed,
			C: []cite{{Doc: "d_mer_claim_decline", Q: "product on at least three pallets was loaded above the 8°C limit"}}},
		{ID: "f_mer_036", S: "Meridian requested the reefer download for trailer 5317 on January 16, 2025, citing Section 4.4.", P: undisputed,
			C: []cite{{Doc: "d_mer_dispatch", Q: "please send the full reefer download for trailer 5317 for January 14–15, as required by Section 4.4 of our agreement", Party: merPlaintiff},
				{Doc: "d_mer_claim_notice", Q: "which we requested on January 16, 2025 and have not received"}}},
		{ID: "f_mer_037", S: "Caldwell furnished the download on February 21, 2025, 36 days after the request, after its safety department held it for internal review.", P: admitted,
			C: []cite{{Doc: "d_mer_rog_resp", Q: "Caldwell produced the download to Meridian on February 21, 2025, after completing its internal review of the event."},
				{Doc: "d_mer_rfa_resp", Q: "RESPONSE TO REQUEST FOR ADMISSION NO. 5: Admitted."},
				{Doc: "d_mer_dispatch", Q: "Pull the download and hold it for safety."}}},
		{ID: "f_mer_038", S: "Caldwell breached Section 4.2 by running trailer 5317's unit in cycle-sentry mode on the load.", P: denied,
			Pl: "Caldwell breached Section 4.2 of the Agreement by operating the refrigeration unit of trailer 5317 in cycle-sentry mode"},
		{ID: "f_mer_039", S: "Boone completed Caldwell's Temperature-Controlled Loads training module on March 8, 2023.", P: undisputed,
			C: []cite{{Doc: "d_mer_rog_resp", Q: "Mr. Boone completed Caldwell's Temperature-Controlled Loads training module on March 8, 2023."}}},
		{ID: "f_mer_040", S: "Caldwell's training did not teach Boone to select continuous mode for pharmaceutical loads.", P: disputed,
			C: []cite{{Doc: "d_mer_depo_boone", Q: "I don't remember anything about continuous mode in that training."},
				{Doc: "d_mer_rog_resp", Q: "The training module addresses unit mode selection for pharmaceutical loads"}}},
		{ID: "f_mer_041", S: "Caldwell's safety director asked on January 15, 2025 why a pharma load was on cycle when the bill of lading said continuous.", P: undisputed,
			C:    []cite{{Doc: "d_mer_dispatch", Q: "Why was 5317 on cycle for a pharma load? The BOL says continuous."}},
			Prop: &propSpec{P: admitted, Why: "A statement by Caldwell's Director of Safety in the course of her duties."}},
		{ID: "f_mer_042", S: "Had the unit run in continuous mode, return-air temperature would more probably than not have stayed within 2–8°C for the whole trip.", P: disputed,
			C: []cite{{Doc: "d_mer_expert_reyes", Q: "Had the unit been operating in continuous-run mode, it is more probable than not that the return-air temperature would have remained within 2°C to 8°C for the entire trip."}}},
		{ID: "f_mer_043", S: "The unit's battery read 11.2 V at the restart attempt, below the 12.1 V minimum for a cycle-sentry restart.", P: undisputed,
			C: []cite{{Doc: "d_mer_reefer", Q: "Battery voltage at restart attempt: 11.2 V (minimum for cycle-sentry restart: 12.1 V)."}}},
		{ID: "f_mer_044", S: "The reefer had three-eighths of a tank of fuel at shutdown, enough for at least fourteen hours of continuous running; fuel played no part.", P: undisputed,
			C: []cite{{Doc: "d_mer_expert_reyes", Q: "The unit's fuel level was three-eighths of a tank at the time of the shutdown, sufficient for at least fourteen hours of continuous-run operation"},
				{Doc: "d_mer_reefer", Q: "Fuel level at 21:05:12 on January 14: 3/8 tank."}},
			Chk: []chkSpec{
				{Days: 1, Result: records.CheckRefuted, Method: "Quote compared with the report as served (version 1)", Note: "Version 1 of the report says one-eighth of a tank."},
				{Days: 9, Result: records.CheckConfirmed, Method: "Quote compared word for word with the corrected report (version 2) and the unit download"},
			}},
		{ID: "f_mer_045", S: "A thirty-minute alarm response under Section 4.3 would have let the driver restart the unit before 21:40.", P: disputed,
			C: []cite{{Doc: "d_mer_expert_reyes", Q: "An alarm response within thirty minutes, as Section 4.3 of the Agreement requires, would have allowed the driver to restart the unit before 21:40"}}},
		{ID: "f_mer_046", S: "Meridian asked Solano to test the product before destruction; Solano said testing was not an option.", P: disputed,
			C: []cite{{Doc: "d_mer_depo_hartmann", Q: "Solano told us testing wasn't an option for a product with that excursion."},
				{Doc: "d_mer_answer", Q: "Meridian failed to mitigate its damages, including by failing to request stability testing of the product before it was destroyed."}}},
		{ID: "f_mer_047", S: "Caldwell replaced the refrigeration unit's battery on January 22, 2025, a week after the loss.", P: undisputed,
			C: []cite{{Doc: "d_mer_rog_resp", Q: "replacement of the unit battery on January 22, 2025"}}},
		{ID: "f_mer_048", S: "Caldwell's night dispatcher was handling a separate breakdown near Kingman during the hours after the alert.", P: undisputed,
			C:    []cite{{Doc: "d_mer_dispatch", Q: "I was on the phone with the Kingman breakdown for most of the night"}},
			Prop: &propSpec{P: admitted, Why: "Feld's email is a party admission."}},
		{ID: "f_mer_049", S: "Meridian's board authorized settlement up to $900,000 at the December mediation, with anything below $1,000,000 referred back to the general counsel.", P: undisputed, Priv: priv,
			C: []cite{{Doc: "d_mer_client_email", Q: "authorized settlement of up to $900,000 at the December mediation, with anything below $1,000,000 to come back to me first"}}},
		{ID: "f_mer_050", S: "If the Section 11.4 exception applies, recoverable damages are $1,322,850 plus prejudgment interest of roughly $216,000 through October 31, 2026.", P: unresolved, Priv: wp,
			C: []cite{{Doc: "d_mer_damages_memo", Q: "Recoverable damages if the Section 11.4 exception applies are $1,322,850"},
				{Doc: "d_mer_damages_memo", Q: "interest on $1,322,850 from March 14, 2025 to October 31, 2026 is approximately $216,000"}}},
		{ID: "f_mer_051", S: "Solano's replacement cost for the lot is estimated at $910,000 to $980,000.", P: unresolved, Priv: wp,
			C: []cite{{Doc: "d_mer_damages_memo", Q: "which we estimate at $910,000 to $980,000 based on Solano's cost data produced in August"}}},
		{ID: "f_mer_052", S: "The signed loading checklist with the pallet pulp temperatures has not been located in Meridian's claims file.", P: unresolved},
		{ID: "f_mer_053", S: "Caldwell's cargo insurer has reserved its rights on coverage above the $250,000 cap.", P: unresolved,
			Prop: &propSpec{P: undisputed, Why: "Reported by the client in a call; no document yet."}},
		{ID: "f_mer_054", S: "Boone's electronic logging device shows him off duty from 8:38 p.m. on January 14, 2025.", P: unresolved},
		{ID: "f_mer_055", S: "Solano will rebid its distribution contract with Meridian in 2027.", P: unresolved, Priv: priv},
		{ID: "f_mer_056", S: "Caldwell ran other Meridian pharma loads in cycle-sentry mode in 2024.", P: unresolved},
	}
}

func merDeadlines() []deadlineSpec {
	const order = "d_mer_sched_order"
	return []deadlineSpec{
		{ID: "dl_mer_fact_discovery", Title: "Close of fact discovery", Due: "2026-04-30", Kind: "discovery",
			Rule: "Case Management and Scheduling Order ¶ 1; Fed. R. Civ. P. 16(b)", Doc: order, Q: "1. Close of fact discovery: April 30, 2026.", Done: true, Checked: true},
		{ID: "dl_mer_expert_opening", Title: "Opening expert disclosures", Due: "2026-06-26", Kind: "expert",
			Rule: "Fed. R. Civ. P. 26(a)(2); Scheduling Order ¶ 2", Doc: order, Q: "2. Opening expert disclosures under Rule 26(a)(2): June 26, 2026.", Done: true, Checked: true},
		{ID: "dl_mer_expert_rebuttal", Title: "Rebuttal expert disclosures", Due: "2026-07-24", Kind: "expert",
			Rule: "Scheduling Order ¶ 3", Doc: order, Q: "3. Rebuttal expert disclosures: July 24, 2026.", Done: true},
		{ID: "dl_mer_expert_close", Title: "Close of expert discovery", Due: "2026-09-18", Kind: "discovery",
			Rule: "Scheduling Order ¶ 4", Doc: order, Q: "4. Close of expert discovery: September 18, 2026.", Done: true},
		{ID: "dl_mer_dispositive", Title: "Last day to file dispositive motions", Due: "2026-10-29", Kind: "filing",
			Rule: "Scheduling Order ¶ 5", Doc: order, Q: "5. Last day to file dispositive motions: October 29, 2026.", Done: true, Checked: true},
		{ID: "dl_mer_msj_opposition", Title: "Opposition to Caldwell's motion for partial summary judgment (Section 11.3 cap)", Due: "2026-11-12", Kind: "filing",
			Rule: "Civil L.R. 7-3(a) (14 days after the motion was filed on October 29, 2026)", Doc: order, Q: "Oppositions and replies are due as provided in Civil Local Rule 7-3."},
		{ID: "dl_mer_mediation", Title: "Complete mediation", Due: "2026-12-04", Kind: "mediation",
			Rule: "ADR L.R. 6; Scheduling Order ¶ 7", Doc: order, Q: "no later than December 4, 2026", Checked: true},
		{ID: "dl_mer_msj_hearing", Title: "Last day to hear dispositive motions", Due: "2026-12-10", Kind: "hearing",
			Rule: "Scheduling Order ¶ 6", Doc: order, Q: "6. Last day to hear dispositive motions: December 10, 2026 at 2:00 p.m."},
		{ID: "dl_mer_pretrial_statement", Title: "Joint pretrial statement", Due: "2027-02-05", Kind: "filing",
			Rule: "Scheduling Order ¶ 8", Doc: order, Q: "Joint pretrial statement due February 5, 2027."},
		{ID: "dl_mer_trial", Title: "Jury trial", Due: "2027-03-15", Kind: "trial",
			Rule: "Scheduling Order ¶ 9", Doc: order, Q: "9. Jury trial: March 15, 2027 at 8:30 a.m."},
	}
}

func merNotes() []noteSpec {
	return []noteSpec{
		{ID: "n_mer_001", Author: "p_dana_whitfield", At: "2025-03-26T17:42:10Z", Priv: wp,
			Body: "Intake call with Victor Osei and Lena Hartmann. Client wants to recover the full Solano payment; Caldwell tendered $250,000 as the cap. The case turns on whether the Section 11.4 exception for non-compliance with Section 4.2 lifts the cap. Asked Lena for the loading checklist and the tender template."},
		{ID: "n_mer_002", Author: "p_priya_nair", At: "2025-10-03T22:08:51Z",
			Body: "E-discovery vendor invoice for processing Caldwell's production approved; 14,220 pages loaded to the review platform under the Meridian matter number."},
		{ID: "n_mer_003", Author: "p_sam_okafor", At: "2026-03-04T00:15:33Z", Doc: "d_mer_depo_boone",
			Body: "Certified transcript of the Boone deposition received from the reporter and added to the record; exhibits 12 through 19 cross-referenced to the production numbers."},
		{ID: "n_mer_004", Author: "p_dana_whitfield", At: "2026-07-14T20:10:02Z", Priv: wp, Doc: "d_mer_expert_reyes",
			Body: "Reyes served errata on July 10 correcting Opinion 3 from one-eighth to three-eighths of a tank, which matches the unit download. Re-checked the fuel fact against version 2; the earlier check against version 1 stays on the record as refuted."},
		{ID: "n_mer_005", Author: "p_sam_okafor", At: "2026-10-30T17:26:45Z", Doc: "d_mer_sched_order",
			Body:   "Caldwell filed its motion for partial summary judgment on the Section 11.3 cap on October 29. Opposition calendared for November 12 under Civil L.R. 7-3(a); sent to Dana for a docketing check.",
			Edited: "2026-10-30T19:02:13Z"},
		{ID: "n_mer_006", Author: "p_sam_okafor", At: "2026-09-21T22:40:19Z",
			Body: "Expert discovery closed September 18. Reyes deposition transcript ordered on expedited delivery; mediation statement exhibits list circulated for review."},
	}
}
