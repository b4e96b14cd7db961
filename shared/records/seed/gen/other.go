package main

import "github.com/custodymcp/custody/shared/records"

// otherFirm is a second, small tenant for isolation tests. Ids are scoped to
// a tenant, and this fixture reuses the demo attorney's principal id
// (p_dana_whitfield) on purpose: a test that the demo's principal cannot
// reach m_northwind then proves the tenant boundary, not a team list, is
// what refuses.
func otherFirm() records.Fixture {
	t := records.Tenant{
		ID: "other", Name: "Baird Kessler PC",
		CreatedAt: mustTime("2025-05-05T16:00:00Z"), UpdatedAt: mustTime("2025-05-05T16:00:00Z"),
	}
	principals := []records.Principal{
		{ID: "p_ines_baird", Name: "Ines Baird", Email: "ines@bairdkessler.example", Role: records.RoleAttorney, Licensed: true, BarNumber: "OR 094417",
			CreatedAt: mustTime("2025-05-05T16:02:00Z"), UpdatedAt: mustTime("2025-05-05T16:02:00Z")},
		{ID: "p_dana_whitfield", Name: "Dana Whitfield", Email: "dwhitfield@bairdkessler.example", Role: records.RoleAttorney, Licensed: true, BarNumber: "OR 101552",
			CreatedAt: mustTime("2025-05-05T16:03:00Z"), UpdatedAt: mustTime("2025-05-05T16:03:00Z")},
	}
	b := newBuilder(t, principals, "p_ines_baird")
	b.matter(matterSpec{
		M: records.Matter{
			ID: "m_northwind", Name: "Northwind Dairy v. Pell Refrigeration",
			Caption: "Northwind Dairy Cooperative v. Pell Refrigeration Co.", Court: "Circuit Court of the State of Oregon, County of Multnomah",
			DocketNumber: "25CV21877", Client: "Northwind Dairy Cooperative", ClientRole: "plaintiff",
			PracticeArea: "Commercial litigation: equipment warranty", Status: records.MatterOpen,
			Team: []string{"p_ines_baird", "p_dana_whitfield"}, SourceDocumentID: "d_nw_complaint", OpenedOn: "2025-05-12",
			CreatedAt: mustTime("2025-05-12T17:30:00Z"), UpdatedAt: mustTime("2025-05-12T17:30:00Z"),
		},
		Docs: []docSpec{
			{ID: "d_nw_complaint", Title: "Complaint for Breach of Warranty", Kind: "complaint", Class: pleading, Party: "Northwind Dairy Cooperative",
				Priv: none, Author: "Ines Baird", Custodian: "Baird Kessler PC", Date: "2025-06-02", Pages: 6,
				Body: `NORTHWIND DAIRY COOPERATIVE, Plaintiff, v. PELL REFRIGERATION CO., Defendant. Case No. 25CV21877. COMPLAINT FOR BREACH OF WARRANTY.

1. Pell Refrigeration Co. installed a glycol chiller at Northwind's Gresham creamery on March 3, 2025. 2. The chiller failed on April 19, 2025, and 11,400 gallons of milk rose above 45°F and were discarded.

3. Pell warranted the chiller against defects in materials and workmanship for one year and has refused to repair or replace it.`},
			{ID: "d_nw_service_contract", Title: "Equipment Sale and Service Contract", Kind: "contract", Class: document, Party: "Northwind Dairy Cooperative and Pell Refrigeration Co.",
				Priv: none, Author: "Pell Refrigeration Co.", Custodian: "Northwind Dairy Cooperative", Date: "2025-01-20", Pages: 4,
				Body: `EQUIPMENT SALE AND SERVICE CONTRACT between Pell Refrigeration Co. and Northwind Dairy Cooperative, dated January 20, 2025.

Section 6. Warranty. Pell warrants the equipment against defects in materials and workmanship for one (1) year from installation and will repair or replace defective equipment at its option.`},
		},
		Facts: []factSpec{
			{ID: "f_nw_001", S: "Pell installed the glycol chiller on March 3, 2025.", P: undisputed,
				C: []cite{{Doc: "d_nw_complaint", Q: "Pell Refrigeration Co. installed a glycol chiller at Northwind's Gresham creamery on March 3, 2025."}}},
			{ID: "f_nw_002", S: "Pell warranted the equipment for one year from installation.", P: undisputed,
				C: []cite{{Doc: "d_nw_service_contract", Q: "Pell warrants the equipment against defects in materials and workmanship for one (1) year from installation"}}},
			{ID: "f_nw_003", S: "The chiller failed on April 19, 2025 and 11,400 gallons of milk were discarded.", P: disputed,
				C: []cite{{Doc: "d_nw_complaint", Q: "The chiller failed on April 19, 2025, and 11,400 gallons of milk rose above 45°F and were discarded."}}},
			{ID: "f_nw_004", S: "The chiller's compressor was undersized for the creamery's load.", P: unresolved, Priv: wp},
		},
		Deadlines: []deadlineSpec{
			{ID: "dl_nw_answer", Title: "Pell's answer due", Due: "2025-07-07", Kind: "filing", Rule: "ORCP 7 C(2)", Done: true},
		},
		Notes: []noteSpec{
			{ID: "n_nw_001", Author: "p_ines_baird", At: "2025-06-03T18:00:00Z", Body: "Complaint filed and served on Pell's registered agent."},
		},
	})
	return b.f
}
