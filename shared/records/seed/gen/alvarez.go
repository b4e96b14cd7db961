package main

import (
	"strings"

	"github.com/custodymcp/custody/shared/records"
)

// Alvarez v. Brightline Senior Living: a whistleblower-retaliation case in
// state court. A wellness director reported overnight understaffing, first
// to her executive director and then to the state licensing agency; the
// agency cited the facility; eight days later she was on a performance plan
// and within five weeks she was fired.

const (
	alvPlaintiff = "Rosa M. Alvarez"
	alvDefendant = "Brightline Senior Living, Inc."
	alvCounsel   = "Hale & Ortiz LLP (counsel for Alvarez)"
)

var alvEcon = `PRIVILEGED AND CONFIDENTIAL — PREPARED AT THE REQUEST OF COUNSEL — ATTORNEY WORK PRODUCT
PRELIMINARY ECONOMIC LOSS ANALYSIS: ROSA M. ALVAREZ
Prepared by Martin Szabo, Szabo Economics, consulting expert for Hale & Ortiz LLP. Date: September 30, 2026.

Base earnings: annual salary of $98,500 at termination on December 9, 2024, plus employer benefits valued at 21.0 percent of salary ($20,685), for total annual compensation of $119,185.

Mitigation: Ms. Alvarez was unemployed from December 10, 2024 through June 1, 2025 and began work at Eastbay Home Health on June 2, 2025 at $81,000 per year, with benefits valued at 18.0 percent ($14,580), for total annual compensation of $95,580.

Past loss through September 30, 2026: $56,816 during unemployment plus $31,430 in differential after re-employment, a total of $88,246. Future loss: an annual differential of $23,605, which we project for three years and discount to present value at 3.9 percent, giving $65,640.

Emotional distress, civil penalties and waiting-time penalties are outside the scope of this analysis. Waiting-time penalties under Labor Code section 203, if awarded, would be four days of wages at $378.85 per day, or $1,515.40.`

var alvEconJune = strings.NewReplacer(
	"Date: September 30, 2026.", "Date: June 15, 2026.",
	"Past loss through September 30, 2026: $56,816 during unemployment plus $31,430 in differential after re-employment, a total of $88,246.",
	"Past loss through June 15, 2026: $56,816 during unemployment plus $24,445 in differential after re-employment, a total of $81,261.",
).Replace(alvEcon)

func alvarez() matterSpec {
	m := records.Matter{
		ID:               "m_alvarez",
		Name:             "Alvarez v. Brightline",
		Caption:          "Rosa M. Alvarez v. Brightline Senior Living, Inc.",
		Court:            "Superior Court of California, County of Alameda",
		DocketNumber:     "25CV104172",
		Client:           alvPlaintiff,
		ClientRole:       "plaintiff",
		PracticeArea:     "Employment: whistleblower retaliation (Lab. Code § 1102.5) and wrongful termination",
		Status:           records.MatterOpen,
		Team:             []string{"p_dana_whitfield", "p_sam_okafor"},
		SourceDocumentID: "d_alv_complaint",
		OpenedOn:         "2025-01-13",
		CreatedAt:        mustTime("2025-01-13T22:41:06Z"),
		UpdatedAt:        mustTime("2025-06-23T17:12:48Z"),
	}
	return matterSpec{
		M: m, Plaintiff: alvPlaintiff, Defendant: alvDefendant,
		Pleadings: alvPleadings(),
		Docs:      alvDocs(),
		Facts:     alvFacts(),
		Deadlines: alvDeadlines(),
		Notes:     alvNotes(),
	}
}

func alvPleadings() pleadingSpec {
	return pleadingSpec{
		Complaint: docSpec{ID: "d_alv_complaint", Title: "Verified Complaint for Retaliation (Lab. Code § 1102.5), Wrongful Termination and Waiting-Time Penalties",
			Kind: "complaint", Class: pleading, Party: alvPlaintiff, Priv: none, Author: "Dana Whitfield, Hale & Ortiz LLP",
			Custodian: "Hale & Ortiz LLP", Date: "2025-02-18", Pages: 16, Checked: "2025-02-20T18:03:27Z"},
		Head: []string{
			"HALE & ORTIZ LLP\nDana Whitfield (SBN 287114)\n1999 Harrison Street, Suite 1800, Oakland, California 94612\nAttorneys for Plaintiff Rosa M. Alvarez\nSUPERIOR COURT OF CALIFORNIA, COUNTY OF ALAMEDA",
			"ROSA M. ALVAREZ, Plaintiff, v. BRIGHTLINE SENIOR LIVING, INC., a Delaware corporation; and DOES 1 through 20, Defendants. Case No. 25CV104172. VERIFIED COMPLAINT FOR: (1) RETALIATION, LABOR CODE § 1102.5; (2) WRONGFUL TERMINATION IN VIOLATION OF PUBLIC POLICY; (3) WAITING-TIME PENALTIES, LABOR CODE §§ 201, 203. DEMAND FOR JURY TRIAL.",
		},
		Items: []allegation{
			{Heading: "PARTIES", Text: "Plaintiff Rosa M. Alvarez is an individual residing in Alameda County, California. She is a licensed vocational nurse."},
			{Text: "Defendant Brightline Senior Living, Inc. (\"Brightline\") is a Delaware corporation that operates Brightline at Lake Merritt, a licensed residential care facility for the elderly at 355 Grand Avenue, Oakland, California (the \"Facility\")."},
			{Heading: "VENUE", Text: "Venue is proper in Alameda County under Code of Civil Procedure section 395(a) because Brightline's wrongful conduct occurred, and Ms. Alvarez's employment was performed, in this county."},
			{Heading: "FACTUAL ALLEGATIONS", Text: "Brightline hired Ms. Alvarez as Wellness Director of the Facility effective April 5, 2021, at an annual salary of $92,000."},
			{Text: "As Wellness Director, Ms. Alvarez supervised the Facility's medication technicians and caregivers and was responsible for residents' medication records."},
			{Text: "In her 2023 annual performance review, dated January 19, 2024, Brightline rated Ms. Alvarez's overall performance \"Exceeds Expectations.\""},
			{Text: "In 2024 her salary was $98,500."},
			{Text: "From July through October 2024, the Facility regularly staffed its overnight shift with one caregiver for 64 residents, including residents of its memory care neighborhood."},
			{Text: "On September 12, 2024, Ms. Alvarez reported to the Facility's Executive Director, Gregory Whitcomb, in writing that overnight staffing was insufficient to meet residents' needs and that two medication errors had occurred on night shifts in August 2024."},
			{Text: "On October 3, 2024, Ms. Alvarez again reported the staffing shortage to Mr. Whitcomb in writing and asked that a second overnight caregiver be scheduled."},
			{Text: "Mr. Whitcomb replied that the budget did not allow a second overnight caregiver and that Ms. Alvarez should \"stop putting this in writing.\""},
			{Text: "On October 21, 2024, Ms. Alvarez filed a complaint with the Community Care Licensing Division of the California Department of Social Services (\"CCLD\") reporting the overnight staffing shortage and the medication errors."},
			{Text: "On November 6, 2024, CCLD conducted an unannounced inspection of the Facility."},
			{Text: "CCLD cited the Facility for failing to maintain sufficient staff on the overnight shift to meet residents' needs."},
			{Text: "Brightline knew that Ms. Alvarez had filed the complaint with CCLD before November 14, 2024."},
			{Text: "On November 14, 2024, eight days after the inspection, Brightline placed Ms. Alvarez on a 30-day performance improvement plan."},
			{Text: "The performance improvement plan was the first written criticism of Ms. Alvarez's performance in her employment with Brightline."},
			{Text: "On December 9, 2024, before the 30-day period of the plan had ended, Brightline terminated Ms. Alvarez's employment."},
			{Text: "Brightline's termination letter gave as the reason Ms. Alvarez's \"failure to meet the expectations of the performance improvement plan.\""},
			{Text: "Brightline did not pay Ms. Alvarez her final wages on December 9, 2024."},
			{Text: "Brightline paid Ms. Alvarez's final wages on December 13, 2024, four days after her termination."},
			{Text: "Ms. Alvarez's protected disclosures were a contributing factor in Brightline's decision to terminate her employment."},
			{Text: "As a result of her termination, Ms. Alvarez has lost wages and benefits and has suffered emotional distress."},
			{Heading: "FIRST CAUSE OF ACTION (Retaliation, Labor Code § 1102.5(b))", Text: "Plaintiff incorporates paragraphs 1 through 23."},
			{Text: "Ms. Alvarez disclosed information to a person with authority over her and to a government agency, which she had reasonable cause to believe disclosed a violation of the regulations governing residential care facilities for the elderly, including California Code of Regulations, title 22, section 87411."},
			{Text: "Brightline retaliated against Ms. Alvarez for those disclosures by placing her on a performance improvement plan and terminating her employment."},
			{Heading: "SECOND CAUSE OF ACTION (Wrongful Termination in Violation of Public Policy)", Text: "Plaintiff incorporates paragraphs 1 through 26."},
			{Text: "Brightline terminated Ms. Alvarez's employment in violation of the public policies expressed in Labor Code section 1102.5 and in the California Residential Care Facilities for the Elderly Act, Health and Safety Code section 1569 and following."},
			{Heading: "THIRD CAUSE OF ACTION (Waiting-Time Penalties, Labor Code §§ 201, 203)", Text: "Plaintiff incorporates paragraphs 1 through 28."},
			{Text: "Labor Code section 201 required Brightline to pay Ms. Alvarez's final wages immediately upon her discharge on December 9, 2024."},
			{Text: "Brightline willfully failed to pay final wages when due and owes waiting-time penalties under Labor Code section 203 of four days' wages."},
		},
		Tail: []string{
			"PRAYER FOR RELIEF\nPlaintiff prays for judgment against Brightline for: (a) lost wages and benefits, past and future, according to proof; (b) damages for emotional distress; (c) a civil penalty of $10,000 under Labor Code section 1102.5(f); (d) waiting-time penalties under Labor Code section 203; (e) punitive damages under Civil Code section 3294; (f) reasonable attorneys' fees under Labor Code section 1102.5(j) and Code of Civil Procedure section 1021.5; (g) prejudgment interest; and (h) costs of suit.",
			"DEMAND FOR JURY TRIAL. Plaintiff demands a jury on all causes of action.\nDated: February 18, 2025. HALE & ORTIZ LLP, By: /s/ Dana Whitfield.\nVERIFICATION: I, Rosa M. Alvarez, am the plaintiff in this action. I have read this complaint, and the facts stated in it are true of my own knowledge, except as to matters stated on information and belief, which I believe to be true. I declare under penalty of perjury under the laws of the State of California that the foregoing is true and correct. /s/ Rosa M. Alvarez.",
		},
		Answer: docSpec{ID: "d_alv_answer", Title: "Defendant Brightline Senior Living, Inc.'s Verified Answer to Verified Complaint",
			Kind: "answer", Class: pleading, Party: alvDefendant, Priv: none, Author: "Celeste Marsh, Marsh Delacroix LLP",
			Custodian: "Hale & Ortiz LLP", Date: "2025-04-04", Pages: 11},
		Defendant: "Brightline",
		Codes:     "LAAAAAADPADLAPDADAAAAADDIDDIDJD",
		Partial: map[int]string{
			9:  "Brightline admits that Ms. Alvarez sent Mr. Whitcomb an email on September 12, 2024 concerning overnight staffing, and denies that the email reported two medication errors.",
			14: "Brightline admits that CCLD issued a notice of deficiency following its November 6, 2024 visit, states that the deficiency was corrected on November 8, 2024, and otherwise denies the allegations of Paragraph 14.",
		},
		AnswerHead: []string{
			"MARSH DELACROIX LLP\nCeleste Marsh (SBN 224519)\n101 Mission Street, Suite 1450, San Francisco, California 94105\nAttorneys for Defendant Brightline Senior Living, Inc.\nSUPERIOR COURT OF CALIFORNIA, COUNTY OF ALAMEDA. Case No. 25CV104172.\nDEFENDANT BRIGHTLINE SENIOR LIVING, INC.'S VERIFIED ANSWER TO VERIFIED COMPLAINT",
			"Because the Complaint is verified, Defendant Brightline Senior Living, Inc. (\"Brightline\") responds to each numbered paragraph as required by Code of Civil Procedure section 431.30(d). Any allegation not expressly admitted is denied.",
		},
		AnswerTail: []string{
			"AFFIRMATIVE DEFENSES\nFIRST AFFIRMATIVE DEFENSE (Legitimate, Non-Retaliatory Reasons). Brightline would have taken the same actions for legitimate, independent reasons even if Plaintiff had not engaged in any protected activity (Lab. Code § 1102.6). SECOND AFFIRMATIVE DEFENSE (Failure to Mitigate). Plaintiff failed to make reasonable efforts to obtain comparable employment.",
			"THIRD AFFIRMATIVE DEFENSE (Good-Faith Dispute). Any delay in paying final wages resulted from a good-faith dispute and was not willful, so no penalty is owed under Labor Code section 203. FOURTH AFFIRMATIVE DEFENSE (After-Acquired Evidence). Plaintiff's recovery is barred or limited because, after being placed on the performance improvement plan, she sent confidential resident records to a personal email account, conduct for which Brightline would have terminated her employment.",
			"Dated: April 4, 2025. MARSH DELACROIX LLP, By: /s/ Celeste Marsh.\nVERIFICATION: I, Dolores Kim, am the Director of Human Resources of Brightline Senior Living, Inc. and am authorized to make this verification for it. The matters stated in the foregoing answer are true of my own knowledge, except as to matters stated on information and belief, which I believe to be true. I declare under penalty of perjury under the laws of the State of California that the foregoing is true and correct.",
		},
	}
}

func alvDocs() []docSpec {
	return []docSpec{
		{ID: "d_alv_offer", Title: "Offer Letter: Wellness Director (March 22, 2021)", Kind: "letter", Class: document,
			Party: alvDefendant, Priv: none, Author: "Gregory Whitcomb", Custodian: "Rosa M. Alvarez", Date: "2021-03-22", Pages: 2,
			Body: `BRIGHTLINE SENIOR LIVING, INC.
Brightline at Lake Merritt, 355 Grand Avenue, Oakland, CA 94610
March 22, 2021
Ms. Rosa M. Alvarez, LVN
Dear Rosa: We are pleased to offer you the position of Wellness Director at Brightline at Lake Merritt, reporting to the Executive Director, with a start date of April 5, 2021.

Your annual salary will be $92,000, paid biweekly, and you will be eligible for the company's medical, dental and 401(k) plans after thirty days. The Wellness Director oversees medication management, supervises medication technicians and caregivers, and maintains resident health records in compliance with Title 22 of the California Code of Regulations.

Your employment with Brightline is at will. This letter is the complete statement of the terms of our offer. Sincerely, Gregory Whitcomb, Executive Director. Accepted: /s/ Rosa M. Alvarez, March 24, 2021.`},
		{ID: "d_alv_review_2023", Title: "2023 Annual Performance Review: Rosa M. Alvarez", Kind: "performance_review", Class: document,
			Party: alvDefendant, Priv: none, Author: "Gregory Whitcomb", Custodian: "Rosa M. Alvarez", Date: "2024-01-19", Pages: 4,
			Checked: "2025-01-16T19:30:12Z",
			Body: `BRIGHTLINE SENIOR LIVING — ANNUAL PERFORMANCE REVIEW
Employee: Rosa M. Alvarez. Position: Wellness Director. Review period: January 1 – December 31, 2023. Reviewer: Gregory Whitcomb, Executive Director. Date: January 19, 2024.

Clinical oversight: Exceeds Expectations. Rosa's medication-pass audits found zero reportable errors in the second half of 2023, and the Facility's annual CCLD inspection in May 2023 produced no deficiencies in her area.

Leadership: Exceeds Expectations. Rosa trained four new medication technicians and covered night shifts personally during the summer staffing gap. Communication: Meets Expectations. Rosa should route staffing concerns through the weekly managers' meeting before escalating.

Overall rating: Exceeds Expectations. Merit increase: 4.5%, bringing annual salary to $98,500 effective February 1, 2024. Employee signature: /s/ Rosa M. Alvarez. Reviewer signature: /s/ Gregory Whitcomb.`},
		{ID: "d_alv_staffing_emails", Title: "Email chain: Alvarez and Whitcomb re overnight staffing (September 12 – October 3, 2024)", Kind: "email", Class: corresp,
			Party: alvPlaintiff, Priv: none, Author: "Rosa M. Alvarez; Gregory Whitcomb", Custodian: "Rosa M. Alvarez (produced ALV-000031)", Date: "2024-10-03", Pages: 4,
			Checked: "2025-01-16T19:34:40Z",
			Body: `From: Rosa Alvarez <ralvarez@brightlinesl.example>
To: Gregory Whitcomb <gwhitcomb@brightlinesl.example>
Date: September 12, 2024 6:18 AM
Subject: Overnight staffing — urgent
Greg, we had one caregiver on nights for 64 residents again this week, including the memory care neighborhood. That is not enough to meet residents' needs and it is not safe. We had two medication errors on night shift in August, on August 9 and August 23, both late doses of scheduled insulin. I am asking for a second overnight caregiver starting this month.

From: Gregory Whitcomb
To: Rosa Alvarez
Date: September 12, 2024 2:41 PM
Subject: RE: Overnight staffing — urgent
Rosa, I hear you, but corporate froze night hiring through Q4. Let's discuss at managers' meeting. Please make sure the August incidents are documented internally only.

From: Rosa Alvarez
To: Gregory Whitcomb
Date: October 3, 2024 5:55 AM
Subject: Second request — overnight caregiver
Greg, nights are still one caregiver for 64 residents. Last night a resident in memory care fell at 2:40 a.m. and was on the floor for about twenty minutes before anyone found her. I am asking again, in writing, that we schedule a second overnight caregiver. If corporate will not approve it, I believe I have to report it.

From: Gregory Whitcomb
To: Rosa Alvarez
Date: October 3, 2024 11:07 AM
Subject: RE: Second request — overnight caregiver
The budget does not allow a second overnight caregiver right now. We handle staffing internally. Stop putting this in writing and come see me.`},
		{ID: "d_alv_ccld_complaint", Title: "Complaint to Community Care Licensing (Reference CCL-24-0087731)", Kind: "agency_complaint", Class: corresp,
			Party: alvPlaintiff, Priv: none, Author: "Rosa M. Alvarez", Custodian: "Rosa M. Alvarez", Date: "2024-10-21", Pages: 3,
			Body: `CALIFORNIA DEPARTMENT OF SOCIAL SERVICES — COMMUNITY CARE LICENSING DIVISION
COMPLAINT INTAKE (ONLINE SUBMISSION)
Submitted: October 21, 2024, 9:14 PM. Reference: CCL-24-0087731. Facility: Brightline at Lake Merritt, license no. 019201847. Facility type: Residential Care Facility for the Elderly.

Description: Since July 2024 the facility has scheduled one caregiver on the overnight shift for 64 residents, including 18 residents in the memory care neighborhood. Two medication errors occurred on night shift in August 2024. On October 3, 2024 a memory care resident fell at about 2:40 a.m. and was not found for about twenty minutes.

I raised this with the Executive Director in writing on September 12 and October 3, 2024, and was told the budget does not allow more staff. Complainant: Rosa Alvarez, Wellness Director. The complainant asked that her identity be kept confidential.`},
		{ID: "d_alv_ccld_report", Title: "CCLD Complaint Investigation Report, Control No. 24-CR-20311", Kind: "agency_report", Class: document,
			Party: "California Department of Social Services (non-party)", Priv: none, Author: "Teresa Nguyen, Licensing Program Analyst", Custodian: "Hale & Ortiz LLP (public records request)", Date: "2024-11-06", Pages: 5,
			Checked: "2025-03-03T17:48:09Z",
			Body: `STATE OF CALIFORNIA — DEPARTMENT OF SOCIAL SERVICES, COMMUNITY CARE LICENSING DIVISION
COMPLAINT INVESTIGATION REPORT
Facility: Brightline at Lake Merritt, license no. 019201847. Complaint control no. 24-CR-20311. Visit date: November 6, 2024 (unannounced). Met with: Gregory Whitcomb, Executive Director.

ALLEGATION 1: Facility does not have sufficient staff on the overnight shift to meet residents' needs. FINDING: SUBSTANTIATED. Staffing schedules for July 1 through November 5, 2024 show one caregiver assigned from 10:00 p.m. to 6:00 a.m. on 97 of 128 nights, for a census of 62 to 64 residents, 18 of whom require supervision in the memory care unit.

ALLEGATION 2: Residents did not receive medications as prescribed. FINDING: SUBSTANTIATED. Medication records show late administration of scheduled insulin to one resident on August 9 and August 23, 2024, both during the overnight shift.

DEFICIENCY CITED: Type B, Cal. Code Regs., tit. 22, § 87411(a): facility personnel shall at all times be sufficient in numbers to provide the services necessary to meet resident needs. Plan of correction due: November 20, 2024.

Exit interview held with the Executive Director, who was informed that the complaint had been received on October 21, 2024. The identity of the complainant was not disclosed. Licensing Program Analyst: Teresa Nguyen.`},
		{ID: "d_alv_pip", Title: "Performance Improvement Plan: Rosa M. Alvarez (November 14, 2024)", Kind: "personnel_record", Class: document,
			Party: alvDefendant, Priv: none, Author: "Gregory Whitcomb", Custodian: "Brightline Senior Living, Inc. (produced BSL-000412)", Date: "2024-11-14", Pages: 3,
			Body: `BRIGHTLINE SENIOR LIVING — PERFORMANCE IMPROVEMENT PLAN
Employee: Rosa M. Alvarez, Wellness Director. Issued by: Gregory Whitcomb, Executive Director. Date: November 14, 2024. Duration: 30 days, through December 14, 2024.

Areas for improvement: (1) Communication — escalating staffing issues outside the chain of command rather than through the weekly managers' meeting; (2) Documentation — medication incident reports for August 2024 were not completed within 24 hours; (3) Team morale — caregivers have reported feeling pressured to pick up night shifts.

Expectations: route all staffing concerns through the managers' meeting; complete incident reports within 24 hours; hold weekly check-ins with the Executive Director. Failure to meet these expectations may result in further discipline, up to and including termination. Employee signature: /s/ Rosa M. Alvarez (signed under protest).`},
		{ID: "d_alv_termination", Title: "Termination Letter (December 9, 2024)", Kind: "letter", Class: corresp,
			Party: alvDefendant, Priv: none, Author: "Gregory Whitcomb", Custodian: "Rosa M. Alvarez", Date: "2024-12-09", Pages: 2,
			Body: `BRIGHTLINE SENIOR LIVING, INC.
December 9, 2024. Hand delivered.
Ms. Rosa M. Alvarez
Re: Separation of employment

This letter confirms that your employment with Brightline Senior Living, Inc. ends effective today, December 9, 2024, because of your failure to meet the expectations of the performance improvement plan issued on November 14, 2024. Your final paycheck, including accrued vacation, will be mailed to your home address.

Please return your keys, badge and any company property, including resident records, by December 11, 2024. Sincerely, Gregory Whitcomb, Executive Director. cc: Janet Price, Regional Vice President; Human Resources.`},
		{ID: "d_alv_final_pay", Title: "Final Earnings Statement (Pay Date December 13, 2024)", Kind: "payroll_record", Class: document,
			Party: alvDefendant, Priv: none, Author: "Brightline Senior Living payroll (Denver)", Custodian: "Rosa M. Alvarez", Date: "2024-12-13", Pages: 2,
			Body: `BRIGHTLINE SENIOR LIVING, INC. — EARNINGS STATEMENT (FINAL PAY)
Employee: Rosa M. Alvarez. Pay date: December 13, 2024. Check no. 0048812. Pay period: November 30 – December 9, 2024.

Regular salary: $2,273.08. Accrued vacation payout, 86.4 hours at $47.36: $4,091.90. Gross pay: $6,364.98. Net pay: $4,357.55. Mailed December 13, 2024 by overnight delivery.`},
		{ID: "d_alv_rog_resp", Title: "Brightline's Responses to Special Interrogatories, Set One", Kind: "discovery_response", Class: discovery,
			Party: alvDefendant, Priv: none, Author: "Celeste Marsh, Marsh Delacroix LLP", Custodian: "Hale & Ortiz LLP", Date: "2025-08-15", Pages: 10,
			Body: `DEFENDANT BRIGHTLINE SENIOR LIVING, INC.'S RESPONSES TO PLAINTIFF'S SPECIAL INTERROGATORIES, SET ONE
Responding under Code of Civil Procedure sections 2030.210 through 2030.250. Discovery and investigation are continuing.

SPECIAL INTERROGATORY NO. 1: State each reason for the termination of Plaintiff's employment. RESPONSE TO SPECIAL INTERROGATORY NO. 1: Plaintiff failed to meet the expectations of her performance improvement plan, including by continuing to discuss staffing with caregivers rather than through the managers' meeting and by failing to complete the August 2024 incident reports within 24 hours.

SPECIAL INTERROGATORY NO. 2: Identify each person who participated in the decision to terminate Plaintiff's employment. RESPONSE TO SPECIAL INTERROGATORY NO. 2: Gregory Whitcomb, Executive Director; Janet Price, Regional Vice President; and Dolores Kim, Director of Human Resources.

SPECIAL INTERROGATORY NO. 3: State the date on which you first learned that Plaintiff had made a complaint to any government agency. RESPONSE TO SPECIAL INTERROGATORY NO. 3: Brightline first learned that Plaintiff had made a complaint to the California Department of Social Services when it was served with the Complaint in this action on February 24, 2025.

SPECIAL INTERROGATORY NO. 4: State the number of caregivers scheduled on the overnight shift at the Facility on each night from July 1, 2024 through November 5, 2024. RESPONSE TO SPECIAL INTERROGATORY NO. 4: Under Code of Civil Procedure section 2030.230, Brightline refers Plaintiff to the staffing schedules produced as BSL-001204 through BSL-001331, from which the answer may be derived.

SPECIAL INTERROGATORY NO. 5: State all facts supporting your contention that Plaintiff's final wages were not willfully withheld. RESPONSE TO SPECIAL INTERROGATORY NO. 5: Brightline's payroll is processed centrally in Denver, Colorado. The final paycheck was issued on the next regular off-cycle processing date, December 13, 2024, and Brightline believed in good faith that this was permitted.

Dated: August 15, 2025. MARSH DELACROIX LLP, By: /s/ Celeste Marsh. VERIFICATION: I, Dolores Kim, Director of Human Resources, have read these responses and declare under penalty of perjury under the laws of the State of California that they are true.`},
		{ID: "d_alv_rfa_resp", Title: "Brightline's Responses to Requests for Admission, Set One", Kind: "discovery_response", Class: discovery,
			Party: alvDefendant, Priv: none, Author: "Celeste Marsh, Marsh Delacroix LLP", Custodian: "Hale & Ortiz LLP", Date: "2025-08-15", Pages: 7,
			Body: `DEFENDANT BRIGHTLINE SENIOR LIVING, INC.'S RESPONSES TO PLAINTIFF'S REQUESTS FOR ADMISSION, SET ONE
Responding under Code of Civil Procedure section 2033.210 and following.

REQUEST FOR ADMISSION NO. 1: Admit that Plaintiff's 2023 performance review rated her overall performance "Exceeds Expectations." RESPONSE TO REQUEST FOR ADMISSION NO. 1: Admit.
REQUEST FOR ADMISSION NO. 2: Admit that before November 14, 2024 Brightline had not issued Plaintiff any written warning or discipline. RESPONSE TO REQUEST FOR ADMISSION NO. 2: Admit.

REQUEST FOR ADMISSION NO. 3: Admit that CCLD cited the Facility on November 6, 2024 for insufficient overnight staffing under Cal. Code Regs., tit. 22, § 87411(a). RESPONSE TO REQUEST FOR ADMISSION NO. 3: Admit.
REQUEST FOR ADMISSION NO. 4: Admit that Brightline did not pay Plaintiff's final wages on December 9, 2024. RESPONSE TO REQUEST FOR ADMISSION NO. 4: Admit.

REQUEST FOR ADMISSION NO. 5: Admit that Gregory Whitcomb believed on November 7, 2024 that Plaintiff had made the complaint to CCLD. RESPONSE TO REQUEST FOR ADMISSION NO. 5: Deny.
REQUEST FOR ADMISSION NO. 6: Admit that Plaintiff's protected activity was a contributing factor in the decision to terminate her employment. RESPONSE TO REQUEST FOR ADMISSION NO. 6: Deny.

Dated: August 15, 2025. MARSH DELACROIX LLP, By: /s/ Celeste Marsh, Attorneys for Defendant.`},
		{ID: "d_alv_depo_alvarez", Title: "Deposition of Rosa M. Alvarez (Excerpts)", Kind: "deposition_transcript", Class: deposition,
			Party: alvPlaintiff, Priv: none, Author: "Priscilla Obi, CSR No. 14022", Custodian: "Hale & Ortiz LLP", Date: "2025-10-21", Pages: 22,
			Body: `DEPOSITION OF ROSA M. ALVAREZ — EXCERPTS
Taken October 21, 2025, at the offices of Marsh Delacroix LLP, San Francisco, California. Examination by Celeste Marsh for Defendant; Dana Whitfield defending. Reported by Priscilla Obi, CSR No. 14022.

Q. Before November 14, 2024, had anyone at Brightline ever criticized your work in writing?
A. No. My reviews were all good. The 2023 review said exceeds expectations.
Q. The 2023 review also said you should route staffing concerns through the managers' meeting, didn't it?
A. It did. And I did. I raised night staffing at the managers' meeting in July and August before I ever wrote to Greg.

Q. Why did you file a complaint with the state?
A. Because a resident was on the floor for twenty minutes and Greg told me to stop putting it in writing. I thought somebody was going to die on nights.
Q. Did you tell anyone at Brightline that you had filed it?
A. I told one person, Marisol, a med tech, on October 22. I asked her not to say anything.

Q. Did you complete the incident reports for the August medication errors within 24 hours?
A. The night med tech filled out the first page both times. I completed my part the next week. That is how we always did it, and Greg signed off on both reports in August.

Q. On December 6, 2024, did you forward resident medication records to your personal email?
A. I forwarded the August medication administration records for the one resident, to my own email, after I was put on the plan. I wanted proof of what I had reported. I did not send them to anyone else.

Q. Have you found other work since Brightline?
A. I started at Eastbay Home Health on June 2, 2025, as a clinical coordinator. It pays $81,000 a year.
Q. Did you apply for other jobs before that?
A. Twenty-three applications between December and May. I have the list.

(Whereupon, the excerpted portion of the deposition concluded.) REPORTER'S CERTIFICATE: I, Priscilla Obi, CSR No. 14022, certify that the foregoing is a true record of the testimony given.`},
		{ID: "d_alv_depo_whitcomb", Title: "Deposition of Gregory Whitcomb (Excerpts)", Kind: "deposition_transcript", Class: deposition,
			Party: alvDefendant + " (witness Gregory Whitcomb)", Priv: none, Author: "Priscilla Obi, CSR No. 14022", Custodian: "Hale & Ortiz LLP", Date: "2025-12-03", Pages: 26,
			Checked: "2025-12-19T22:10:44Z",
			Body: `DEPOSITION OF GREGORY WHITCOMB — EXCERPTS
Taken December 3, 2025, at the offices of Hale & Ortiz LLP, Oakland, California. Examination by Dana Whitfield for Plaintiff; Celeste Marsh defending. Reported by Priscilla Obi, CSR No. 14022.

Q. How many caregivers did the Facility schedule on the overnight shift between July and October 2024?
A. Usually one. Sometimes two, when census was up or we had a resident on hospice.
Q. Did corporate freeze night hiring in 2024?
A. There was a hiring freeze on new positions for the fourth quarter. That's correct.

Q. When did you first learn that a complaint had been filed with Community Care Licensing?
A. At the exit interview on November 6. The analyst told me a complaint had come in.
Q. Did the analyst tell you who filed it?
A. No. They don't tell you that.

Q. Did you tell anyone you believed Ms. Alvarez had filed the complaint?
A. I may have said to Janet that I thought Rosa went to the state. I was guessing.
Q. When was that?
A. The day after the visit, I think. November 7.

Q. Who decided to put Ms. Alvarez on a performance improvement plan?
A. I did, with HR. Janet approved it.
Q. What did "escalating staffing issues outside the chain of command" in the plan refer to?
A. To her going around the managers' meeting. Emailing me instead of raising it in the meeting, and talking to staff about it.

Q. Did you ever write down a criticism of her performance before November 14, 2024?
A. Not formally. The 2023 review had the note about communication.
Q. Why was she terminated on December 9, before the thirty days ran?
A. Janet and I decided it wasn't going to improve. Staff were upset, and the incident reports were still an issue.

Q. When was her final paycheck issued?
A. Payroll is in Denver. They cut it on the thirteenth. I didn't know it had to be the same day.

(Whereupon, the excerpted portion of the deposition concluded.) REPORTER'S CERTIFICATE: I, Priscilla Obi, CSR No. 14022, certify that the foregoing is a true record of the testimony given.`},
		{ID: "d_alv_econ", Title: "Preliminary Economic Loss Analysis (Consulting Expert, Work Product)", Kind: "expert_analysis", Class: expert,
			Party: alvCounsel, Priv: wp, Author: "Martin Szabo, Szabo Economics", Custodian: "Hale & Ortiz LLP", Date: "2026-09-30", Pages: 9,
			Body: alvEcon, Comment: "updated through September 30, 2026",
			Prior: []priorSpec{{Date: "2026-06-15", Pages: 9, Body: alvEconJune, Comment: "first draft"}}},
		{ID: "d_alv_intake_memo", Title: "Intake Memorandum: Rosa M. Alvarez", Kind: "memo", Class: document,
			Party: alvCounsel, Priv: priv, Author: "Dana Whitfield", Custodian: "Hale & Ortiz LLP", Date: "2025-01-14", Pages: 5,
			Body: `PRIVILEGED AND CONFIDENTIAL — ATTORNEY-CLIENT COMMUNICATION AND ATTORNEY WORK PRODUCT
INTAKE MEMORANDUM
Client: Rosa M. Alvarez. Interviewed by Dana Whitfield and Sam Okafor, January 13, 2025. Prepared January 14, 2025.

Ms. Alvarez says that at the October 2024 managers' meeting Mr. Whitcomb said, in front of four department heads, that "anyone who calls the state on us is done here." She identifies the dining services director, Paul Ferreira, as someone who heard it.

Ms. Alvarez kept copies of her September 12 and October 3 emails and her CCLD confirmation number. She forwarded one resident's August medication records to her personal email on December 6, 2024; we advised her not to send them to anyone and to preserve them unchanged for production under a protective order.

Preliminary assessment: strong temporal proximity (complaint October 21, inspection November 6, plan November 14, termination December 9) and a written "stop putting this in writing" instruction. Under Labor Code section 1102.6 and Lawson v. PPG Architectural Finishes, Inc. (2022) 12 Cal.5th 703, once protected activity is shown to be a contributing factor, Brightline must prove by clear and convincing evidence that it would have terminated her anyway.

Next steps: litigation hold letter to Brightline; request the personnel file under Labor Code section 1198.5; calendar the one-year deadline to file with the Labor Commissioner under Labor Code section 98.7 as a backstop; draft a verified complaint.`},
		{ID: "d_alv_trial_order", Title: "Case Management Order and Order Setting Trial", Kind: "order", Class: document,
			Party: "the Court", Priv: none, Author: "Superior Court of California, County of Alameda", Custodian: "Hale & Ortiz LLP", Date: "2025-06-20", Pages: 4,
			Checked: "2025-06-23T17:05:31Z",
			Body: `SUPERIOR COURT OF CALIFORNIA, COUNTY OF ALAMEDA
Rosa M. Alvarez v. Brightline Senior Living, Inc., Case No. 25CV104172. Department 21.
CASE MANAGEMENT ORDER AND ORDER SETTING TRIAL
The Court held an initial case management conference on June 18, 2025.

1. Jury trial is set for February 8, 2027 at 9:00 a.m. in Department 21. Estimated length: 7 days.
2. A mandatory settlement conference is set for January 15, 2027 at 1:30 p.m. Settlement conference statements are due five court days before the conference.

3. Discovery and expert discovery deadlines run from the trial date under Code of Civil Procedure sections 2024.020 and 2034.230. 4. The parties are ordered to private mediation, to be completed by November 20, 2026.

5. Motions for summary judgment must be heard no later than 30 days before trial, under Code of Civil Procedure section 437c(a)(3). IT IS SO ORDERED. Dated: June 20, 2025. Judge of the Superior Court.`},
	}
}

func alvFacts() []factSpec {
	confirmed := []chkSpec{{Days: 2, Result: records.CheckConfirmed}}
	whitcomb := alvDefendant + " (Gregory Whitcomb)"
	return []factSpec{
		{ID: "f_alv_001", S: "Brightline hired Alvarez as Wellness Director effective April 5, 2021, at $92,000 a year.", P: admitted,
			Pl: "Brightline hired Ms. Alvarez as Wellness Director of the Facility effective April 5, 2021",
			C:  []cite{{Doc: "d_alv_offer", Q: "with a start date of April 5, 2021"}, {Doc: "d_alv_offer", Q: "Your annual salary will be $92,000"}}},
		{ID: "f_alv_002", S: "Alvarez's employment was at will.", P: undisputed,
			C: []cite{{Doc: "d_alv_offer", Q: "Your employment with Brightline is at will."}}},
		{ID: "f_alv_003", S: "As Wellness Director, Alvarez supervised medication technicians and caregivers and kept residents' medication records.", P: admitted,
			Pl: "Ms. Alvarez supervised the Facility's medication technicians and caregivers",
			C:  []cite{{Doc: "d_alv_offer", Q: "The Wellness Director oversees medication management, supervises medication technicians and caregivers"}}},
		{ID: "f_alv_004", S: "Brightline rated Alvarez's overall 2023 performance \"Exceeds Expectations\".", P: admitted,
			Pl:  "Brightline rated Ms. Alvarez's overall performance",
			C:   []cite{{Doc: "d_alv_review_2023", Q: "Overall rating: Exceeds Expectations."}, {Doc: "d_alv_rfa_resp", Q: "RESPONSE TO REQUEST FOR ADMISSION NO. 1: Admit."}},
			Chk: confirmed},
		{ID: "f_alv_005", S: "The 2023 review told Alvarez to route staffing concerns through the weekly managers' meeting before escalating.", P: undisputed,
			C: []cite{{Doc: "d_alv_review_2023", Q: "Rosa should route staffing concerns through the weekly managers' meeting before escalating."}}},
		{ID: "f_alv_006", S: "Alvarez's salary was $98,500 from February 1, 2024.", P: admitted,
			Pl: "In 2024 her salary was $98,500.",
			C:  []cite{{Doc: "d_alv_review_2023", Q: "bringing annual salary to $98,500 effective February 1, 2024"}}},
		{ID: "f_alv_007", S: "From July to early November 2024 the Facility usually scheduled one overnight caregiver for 62 to 64 residents, including 18 in memory care.", P: disputed,
			Pl: "the Facility regularly staffed its overnight shift with one caregiver for 64 residents",
			C: []cite{{Doc: "d_alv_ccld_report", Q: "one caregiver assigned from 10:00 p.m. to 6:00 a.m. on 97 of 128 nights"},
				{Doc: "d_alv_depo_whitcomb", Q: "Usually one. Sometimes two, when census was up or we had a resident on hospice."}},
			Prop: &propSpec{P: admitted, Why: "Whitcomb's testimony concedes that one overnight caregiver was the usual staffing."}},
		{ID: "f_alv_008", S: "Two overnight medication errors occurred in August 2024: late doses of scheduled insulin on August 9 and August 23.", P: undisputed,
			C: []cite{{Doc: "d_alv_ccld_report", Q: "late administration of scheduled insulin to one resident on August 9 and August 23, 2024"},
				{Doc: "d_alv_staffing_emails", Q: "We had two medication errors on night shift in August, on August 9 and August 23, both late doses of scheduled insulin."}}},
		{ID: "f_alv_009", S: "On September 12, 2024, Alvarez told Whitcomb in writing that overnight staffing was insufficient and reported the two August medication errors.", P: disputed,
			Pl:   "On September 12, 2024, Ms. Alvarez reported to the Facility's Executive Director, Gregory Whitcomb, in writing",
			C:    []cite{{Doc: "d_alv_staffing_emails", Q: "That is not enough to meet residents' needs and it is not safe."}},
			Prop: &propSpec{P: undisputed, Why: "The September 12 email itself reports both medication errors; Brightline's partial denial is contradicted by the document."},
			Chk:  confirmed},
		{ID: "f_alv_010", S: "Whitcomb answered that corporate had frozen night hiring through Q4 and asked that the August incidents be documented internally only.", P: undisputed,
			C: []cite{{Doc: "d_alv_staffing_emails", Q: "Please make sure the August incidents are documented internally only.", Party: whitcomb},
				{Doc: "d_alv_staffing_emails", Q: "corporate froze night hiring through Q4", Party: whitcomb}}},
		{ID: "f_alv_011", S: "On October 3, 2024, Alvarez asked again, in writing, for a second overnight caregiver.", P: admitted,
			Pl: "On October 3, 2024, Ms. Alvarez again reported the staffing shortage to Mr. Whitcomb in writing",
			C:  []cite{{Doc: "d_alv_staffing_emails", Q: "I am asking again, in writing, that we schedule a second overnight caregiver."}}},
		{ID: "f_alv_012", S: "Early on October 3, 2024, a memory care resident fell at about 2:40 a.m. and lay on the floor for about twenty minutes.", P: unresolved,
			C: []cite{{Doc: "d_alv_staffing_emails", Q: "a resident in memory care fell at 2:40 a.m. and was on the floor for about twenty minutes before anyone found her"},
				{Doc: "d_alv_ccld_complaint", Q: "a memory care resident fell at about 2:40 a.m. and was not found for about twenty minutes"}}},
		{ID: "f_alv_013", S: "Whitcomb told Alvarez on October 3, 2024 to \"stop putting this in writing\".", P: disputed,
			Pl:   "Mr. Whitcomb replied that the budget did not allow a second overnight caregiver",
			C:    []cite{{Doc: "d_alv_staffing_emails", Q: "Stop putting this in writing and come see me.", Party: whitcomb}},
			Prop: &propSpec{P: admitted, Why: "The instruction appears verbatim in Whitcomb's own email."}},
		{ID: "f_alv_014", S: "Alvarez filed a complaint with CCLD on October 21, 2024 (reference CCL-24-0087731).", P: undisputed,
			Pl: "On October 21, 2024, Ms. Alvarez filed a complaint with the Community Care Licensing Division",
			C: []cite{{Doc: "d_alv_ccld_complaint", Q: "Submitted: October 21, 2024, 9:14 PM. Reference: CCL-24-0087731."},
				{Doc: "d_alv_ccld_report", Q: "informed that the complaint had been received on October 21, 2024"}}},
		{ID: "f_alv_015", S: "Alvarez asked CCLD to keep her identity confidential.", P: undisputed,
			C: []cite{{Doc: "d_alv_ccld_complaint", Q: "The complainant asked that her identity be kept confidential."}}},
		{ID: "f_alv_016", S: "CCLD made an unannounced inspection of the Facility on November 6, 2024.", P: admitted,
			Pl: "On November 6, 2024, CCLD conducted an unannounced inspection of the Facility.",
			C:  []cite{{Doc: "d_alv_ccld_report", Q: "Visit date: November 6, 2024 (unannounced)."}}},
		{ID: "f_alv_017", S: "CCLD substantiated the overnight staffing allegation and cited a Type B deficiency under 22 CCR § 87411(a).", P: admitted,
			Pl: "CCLD cited the Facility for failing to maintain sufficient staff on the overnight shift",
			C: []cite{{Doc: "d_alv_ccld_report", Q: "DEFICIENCY CITED: Type B, Cal. Code Regs., tit. 22, § 87411(a)"},
				{Doc: "d_alv_rfa_resp", Q: "RESPONSE TO REQUEST FOR ADMISSION NO. 3: Admit."}}, Chk: confirmed},
		{ID: "f_alv_018", S: "Brightline says the staffing deficiency was corrected on November 8, 2024.", P: unresolved,
			C: []cite{{Doc: "d_alv_answer", Q: "states that the deficiency was corrected on November 8, 2024"}}},
		{ID: "f_alv_019", S: "Whitcomb learned at the November 6 exit interview that a complaint had been filed, but not who filed it.", P: undisputed,
			C: []cite{{Doc: "d_alv_ccld_report", Q: "The identity of the complainant was not disclosed."},
				{Doc: "d_alv_depo_whitcomb", Q: "At the exit interview on November 6. The analyst told me a complaint had come in."}}},
		{ID: "f_alv_020", S: "On November 7, 2024, Whitcomb told Regional Vice President Janet Price that he thought Alvarez had gone to the state.", P: disputed,
			C: []cite{{Doc: "d_alv_depo_whitcomb", Q: "I may have said to Janet that I thought Rosa went to the state. I was guessing."},
				{Doc: "d_alv_depo_whitcomb", Q: "The day after the visit, I think. November 7."},
				{Doc: "d_alv_rfa_resp", Q: "RESPONSE TO REQUEST FOR ADMISSION NO. 5: Deny."}},
			Prop: &propSpec{P: admitted, Why: "Whitcomb's deposition testimony concedes the statement; the RFA denial predates it."}},
		{ID: "f_alv_021", S: "Brightline knew Alvarez had complained to CCLD before it put her on the plan on November 14, 2024.", P: disputed,
			Pl: "Brightline knew that Ms. Alvarez had filed the complaint with CCLD before November 14, 2024.",
			C: []cite{{Doc: "d_alv_rog_resp", Q: "Brightline first learned that Plaintiff had made a complaint to the California Department of Social Services when it was served with the Complaint in this action on February 24, 2025."},
				{Doc: "d_alv_depo_whitcomb", Q: "I may have said to Janet that I thought Rosa went to the state."}}},
		{ID: "f_alv_022", S: "Alvarez told one coworker, medication technician Marisol, about the CCLD complaint on October 22, 2024.", P: unresolved,
			C: []cite{{Doc: "d_alv_depo_alvarez", Q: "I told one person, Marisol, a med tech, on October 22."}}},
		{ID: "f_alv_023", S: "Brightline put Alvarez on a 30-day performance improvement plan on November 14, 2024, eight days after the inspection.", P: admitted,
			Pl: "On November 14, 2024, eight days after the inspection, Brightline placed Ms. Alvarez on a 30-day performance improvement plan.",
			C:  []cite{{Doc: "d_alv_pip", Q: "Duration: 30 days, through December 14, 2024."}}, Chk: confirmed},
		{ID: "f_alv_024", S: "The plan faulted Alvarez for \"escalating staffing issues outside the chain of command\".", P: undisputed,
			C: []cite{{Doc: "d_alv_pip", Q: "escalating staffing issues outside the chain of command rather than through the weekly managers' meeting"}}},
		{ID: "f_alv_025", S: "Whitcomb testified that \"outside the chain of command\" meant emailing him instead of raising staffing in the meeting, and talking to staff about it.", P: undisputed,
			C: []cite{{Doc: "d_alv_depo_whitcomb", Q: "To her going around the managers' meeting. Emailing me instead of raising it in the meeting, and talking to staff about it."}}},
		{ID: "f_alv_026", S: "The plan was the first written criticism of Alvarez's performance.", P: admitted,
			Pl: "The performance improvement plan was the first written criticism",
			C: []cite{{Doc: "d_alv_rfa_resp", Q: "RESPONSE TO REQUEST FOR ADMISSION NO. 2: Admit."},
				{Doc: "d_alv_depo_whitcomb", Q: "Not formally. The 2023 review had the note about communication."}},
			Prop: &propSpec{P: disputed, Why: "Brightline's answer denies Paragraph 17 and Whitcomb points to the 2023 review's communication note."}},
		{ID: "f_alv_027", S: "Alvarez raised overnight staffing at the managers' meeting in July and August 2024, before she wrote to Whitcomb.", P: unresolved,
			C: []cite{{Doc: "d_alv_depo_alvarez", Q: "I raised night staffing at the managers' meeting in July and August before I ever wrote to Greg."}}},
		{ID: "f_alv_028", S: "Brightline fired Alvarez on December 9, 2024, five days before the plan's 30 days ended.", P: admitted,
			Pl: "On December 9, 2024, before the 30-day period of the plan had ended, Brightline terminated Ms. Alvarez's employment.",
			C:  []cite{{Doc: "d_alv_termination", Q: "ends effective today, December 9, 2024"}}},
		{ID: "f_alv_029", S: "The termination letter gives as the reason Alvarez's failure to meet the plan's expectations.", P: admitted,
			Pl: "Brightline's termination letter gave as the reason",
			C:  []cite{{Doc: "d_alv_termination", Q: "because of your failure to meet the expectations of the performance improvement plan issued on November 14, 2024"}}},
		{ID: "f_alv_030", S: "Whitcomb, Regional Vice President Janet Price and HR Director Dolores Kim made the termination decision.", P: undisputed,
			C: []cite{{Doc: "d_alv_rog_resp", Q: "Gregory Whitcomb, Executive Director; Janet Price, Regional Vice President; and Dolores Kim, Director of Human Resources."}}},
		{ID: "f_alv_031", S: "Whitcomb says he and Price ended the plan early because they decided it \"wasn't going to improve\".", P: undisputed,
			C: []cite{{Doc: "d_alv_depo_whitcomb", Q: "Janet and I decided it wasn't going to improve."}}},
		{ID: "f_alv_032", S: "Brightline's stated reasons include Alvarez continuing to discuss staffing with caregivers.", P: undisputed,
			C: []cite{{Doc: "d_alv_rog_resp", Q: "including by continuing to discuss staffing with caregivers rather than through the managers' meeting"}}},
		{ID: "f_alv_033", S: "The August incident reports were completed the usual way, and Whitcomb signed off on both in August 2024.", P: disputed,
			C: []cite{{Doc: "d_alv_depo_alvarez", Q: "Greg signed off on both reports in August."},
				{Doc: "d_alv_pip", Q: "medication incident reports for August 2024 were not completed within 24 hours"}}},
		{ID: "f_alv_034", S: "Brightline did not pay Alvarez's final wages on December 9, 2024.", P: admitted,
			Pl: "Brightline did not pay Ms. Alvarez her final wages on December 9, 2024.",
			C:  []cite{{Doc: "d_alv_rfa_resp", Q: "RESPONSE TO REQUEST FOR ADMISSION NO. 4: Admit."}}},
		{ID: "f_alv_035", S: "Brightline paid Alvarez's final wages on December 13, 2024, four days after termination.", P: admitted,
			Pl: "Brightline paid Ms. Alvarez's final wages on December 13, 2024",
			C:  []cite{{Doc: "d_alv_final_pay", Q: "Pay date: December 13, 2024."}}},
		{ID: "f_alv_036", S: "Brightline believed in good faith that paying final wages on the next off-cycle date was permitted.", P: disputed,
			C: []cite{{Doc: "d_alv_rog_resp", Q: "Brightline believed in good faith that this was permitted"},
				{Doc: "d_alv_depo_whitcomb", Q: "I didn't know it had to be the same day."}}},
		{ID: "f_alv_037", S: "Waiting-time penalties, if awarded, are four days at $378.85, or $1,515.40.", P: unresolved, Priv: wp,
			C: []cite{{Doc: "d_alv_econ", Q: "would be four days of wages at $378.85 per day, or $1,515.40"}}},
		{ID: "f_alv_038", S: "Alvarez's protected disclosures were a contributing factor in the termination.", P: denied,
			Pl:   "Ms. Alvarez's protected disclosures were a contributing factor",
			C:    []cite{{Doc: "d_alv_rfa_resp", Q: "RESPONSE TO REQUEST FOR ADMISSION NO. 6: Deny."}},
			Prop: &propSpec{P: disputed, Why: "The timing and Whitcomb's testimony about the November 7 conversation are evidence against the denial."}},
		{ID: "f_alv_039", S: "On December 6, 2024, after the plan, Alvarez forwarded one resident's August medication records to her personal email.", P: undisputed,
			C: []cite{{Doc: "d_alv_depo_alvarez", Q: "I forwarded the August medication administration records for the one resident, to my own email, after I was put on the plan."},
				{Doc: "d_alv_answer", Q: "she sent confidential resident records to a personal email account"}}},
		{ID: "f_alv_040", S: "Alvarez did not send the resident records to anyone else.", P: unresolved,
			C: []cite{{Doc: "d_alv_depo_alvarez", Q: "I did not send them to anyone else."}}},
		{ID: "f_alv_041", S: "Alvarez began work at Eastbay Home Health on June 2, 2025, as a clinical coordinator at $81,000 a year.", P: undisputed,
			C: []cite{{Doc: "d_alv_depo_alvarez", Q: "I started at Eastbay Home Health on June 2, 2025, as a clinical coordinator. It pays $81,000 a year."},
				{Doc: "d_alv_econ", Q: "began work at Eastbay Home Health on June 2, 2025 at $81,000 per year"}}},
		{ID: "f_alv_042", S: "Alvarez applied for twenty-three jobs between December 2024 and May 2025.", P: unresolved,
			C: []cite{{Doc: "d_alv_depo_alvarez", Q: "Twenty-three applications between December and May."}}},
		{ID: "f_alv_043", S: "Alvarez's total annual compensation at termination, with benefits, was $119,185.", P: unresolved, Priv: wp,
			C: []cite{{Doc: "d_alv_econ", Q: "for total annual compensation of $119,185"}}},
		{ID: "f_alv_044", S: "Past economic loss through September 30, 2026 is $88,246.", P: unresolved, Priv: wp,
			C:   []cite{{Doc: "d_alv_econ", Q: "a total of $88,246"}},
			Chk: []chkSpec{{Days: 1, Result: records.CheckConfirmed, Method: "Figure compared with the September 30, 2026 analysis (version 2) and its arithmetic re-run"}}},
		{ID: "f_alv_045", S: "Future economic loss, three years discounted at 3.9 percent, is $65,640.", P: unresolved, Priv: wp,
			C: []cite{{Doc: "d_alv_econ", Q: "discount to present value at 3.9 percent, giving $65,640"}}},
		{ID: "f_alv_046", S: "At the October 2024 managers' meeting Whitcomb said that anyone who calls the state on the Facility \"is done here\".", P: unresolved, Priv: priv,
			C: []cite{{Doc: "d_alv_intake_memo", Q: "\"anyone who calls the state on us is done here.\""}}},
		{ID: "f_alv_047", S: "Dining services director Paul Ferreira heard Whitcomb's October 2024 statement.", P: unresolved, Priv: priv,
			C: []cite{{Doc: "d_alv_intake_memo", Q: "She identifies the dining services director, Paul Ferreira, as someone who heard it."}}},
		{ID: "f_alv_048", S: "Brightline froze hiring for new positions in the fourth quarter of 2024.", P: undisputed,
			C: []cite{{Doc: "d_alv_depo_whitcomb", Q: "There was a hiring freeze on new positions for the fourth quarter."}}},
		{ID: "f_alv_049", S: "Brightline is a Delaware corporation operating Brightline at Lake Merritt, a licensed residential care facility for the elderly in Oakland.", P: admitted,
			Pl: "is a Delaware corporation that operates Brightline at Lake Merritt",
			C:  []cite{{Doc: "d_alv_ccld_report", Q: "Facility: Brightline at Lake Merritt, license no. 019201847."}}},
		{ID: "f_alv_050", S: "Alvarez is a licensed vocational nurse residing in Alameda County.", P: unresolved,
			Pl: "She is a licensed vocational nurse."},
		{ID: "f_alv_051", S: "Marisol Vega told Whitcomb about Alvarez's CCLD complaint before November 14, 2024.", P: unresolved},
		{ID: "f_alv_052", S: "Alvarez has been in therapy for anxiety since January 2025.", P: unresolved, Priv: priv},
		{ID: "f_alv_053", S: "Brightline's fourth-quarter 2024 budget eliminated a planned second overnight caregiver position.", P: unresolved,
			Prop: &propSpec{P: disputed, Why: "Whitcomb's email mentions a freeze; the budget itself has not been produced."}},
		{ID: "f_alv_054", S: "The memory care resident who fell on October 3, 2024 fractured a hip.", P: unresolved},
	}
}

func alvDeadlines() []deadlineSpec {
	const order = "d_alv_trial_order"
	return []deadlineSpec{
		{ID: "dl_alv_personnel_file", Title: "Brightline to produce Alvarez's personnel file (30 days after request)", Due: "2025-02-20", Kind: "discovery",
			Rule: "Lab. Code § 1198.5(b)(1)", Done: true},
		{ID: "dl_alv_labor_commissioner", Title: "Backstop: retaliation complaint to the Labor Commissioner (one year from termination)", Due: "2025-12-09", Kind: "filing",
			Rule: "Lab. Code § 98.7(a)(1)", Done: true},
		{ID: "dl_alv_mediation", Title: "Complete private mediation", Due: "2026-11-20", Kind: "mediation",
			Rule: "Case Management Order ¶ 4", Doc: order, Q: "to be completed by November 20, 2026", Checked: true},
		{ID: "dl_alv_expert_demand", Title: "Serve demand for exchange of expert witness information (70 days before trial)", Due: "2026-11-30", Kind: "expert",
			Rule: "Code Civ. Proc. § 2034.220", Doc: order, Q: "Discovery and expert discovery deadlines run from the trial date", Checked: true},
		{ID: "dl_alv_expert_exchange", Title: "Exchange expert witness information (50 days before trial; December 20 is a Sunday)", Due: "2026-12-21", Kind: "expert",
			Rule: "Code Civ. Proc. §§ 2034.230(b), 2016.060", Doc: order, Q: "Discovery and expert discovery deadlines run from the trial date"},
		{ID: "dl_alv_discovery_cutoff", Title: "Discovery cutoff (30 days before trial; January 9 is a Saturday)", Due: "2027-01-11", Kind: "discovery",
			Rule: "Code Civ. Proc. §§ 2024.020(a), 2016.060", Doc: order, Q: "Discovery and expert discovery deadlines run from the trial date"},
		{ID: "dl_alv_msc_statement", Title: "Settlement conference statement (five court days before the conference)", Due: "2027-01-08", Kind: "filing",
			Rule: "Case Management Order ¶ 2; Alameda County Local Rules", Doc: order, Q: "Settlement conference statements are due five court days before the conference."},
		{ID: "dl_alv_msc", Title: "Mandatory settlement conference", Due: "2027-01-15", Kind: "hearing",
			Rule: "Case Management Order ¶ 2", Doc: order, Q: "A mandatory settlement conference is set for January 15, 2027 at 1:30 p.m."},
		{ID: "dl_alv_trial", Title: "Jury trial, Department 21", Due: "2027-02-08", Kind: "trial",
			Rule: "Case Management Order ¶ 1", Doc: order, Q: "1. Jury trial is set for February 8, 2027 at 9:00 a.m. in Department 21.", Checked: true},
	}
}

func alvNotes() []noteSpec {
	return []noteSpec{
		{ID: "n_alv_001", Author: "p_dana_whitfield", At: "2025-01-14T18:20:44Z",
			Body: "Conflict check cleared for Brightline Senior Living, Inc., Gregory Whitcomb, Janet Price, Dolores Kim and Eastbay Home Health. Engagement letter signed; contingency matter."},
		{ID: "n_alv_002", Author: "p_sam_okafor", At: "2025-08-18T23:02:10Z", Priv: wp, Doc: "d_alv_rog_resp",
			Body: "Brightline's verified responses to the special interrogatories and RFAs are in. Special Interrogatory No. 3 says Brightline learned of the CCLD complaint only when served in February 2025. Flagged for Whitcomb's deposition."},
		{ID: "n_alv_003", Author: "p_dana_whitfield", At: "2025-12-04T01:37:29Z", Priv: wp, Doc: "d_alv_depo_whitcomb",
			Body: "Whitcomb admitted he told Janet Price on November 7 that he thought Rosa went to the state. That contradicts Special Interrogatory No. 3 and RFA No. 5. Meet and confer on amended responses; this goes in the mediation brief either way."},
		{ID: "n_alv_004", Author: "p_sam_okafor", At: "2026-10-02T16:48:03Z",
			Body:   "Mediation with Hon. Ellen Parr (Ret.) confirmed for November 12, 2026 at JAMS San Francisco; briefs due November 5. Calendar entries updated.",
			Edited: "2026-10-05T17:11:26Z"},
		{ID: "n_alv_005", Author: "p_sam_okafor", At: "2025-10-22T20:05:37Z", Doc: "d_alv_depo_alvarez",
			Body: "Rough transcript of the client's deposition received; certified copy expected in two weeks. Errata period runs 30 days from notice of availability."},
	}
}
