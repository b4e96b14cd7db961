package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/approvals/ledger"
	"github.com/custodymcp/custody/shared/approvals/outbox"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/store"
)

// outbox list and ack, and ledger verify, on every engine: a message an
// approval left is listed until acknowledged, once; a matter's ledger
// verifies, and once one of its rows is edited, verify exits 1 naming the
// row's seq.
func TestOutboxAndLedgerOnEveryEngine(t *testing.T) {
	for _, b := range []backend{stoppedFile(t), runningFile(t), dynamoDB(t)} {
		t.Run(b.name, func(t *testing.T) {
			if b.requests != nil {
				mustCtl(t, b.env, b.args("table", "create")...)
			}
			mustCtl(t, b.env, b.args("import", demoFixture)...)
			now := time.Now().UTC()
			msg := outbox.Message{ID: outbox.IDFor("prp_custodyctl"), Tenant: seed.DemoTenant, CaseID: seed.Alvarez, Proposal: "prp_custodyctl",
				Action: "serve_production", Args: []byte(`{"recipient":"Defense counsel"}`), WhatWillHappen: "An external act: serve a production.",
				Requester: seed.DemoParalegal, ApprovedBy: seed.DemoAttorney, ApprovedAt: now}
			b.withStore(t, func(st store.Store) {
				op, err := outbox.Put(msg)
				if err != nil {
					t.Fatal(err)
				}
				ops := []store.Op{op}
				head := ledger.Head{Hash: ledger.Genesis}
				for i := range 3 {
					more, hash, err := ledger.Append(head, ledger.Body{At: now, Tenant: seed.DemoTenant, CaseID: seed.Alvarez,
						Proposal: "prp_" + strings.Repeat("0", 31) + string(rune('1'+i)), Action: "create_deadline", ApprovedBy: seed.DemoAttorney})
					if err != nil {
						t.Fatal(err)
					}
					if err := st.Transact(context.Background(), more); err != nil {
						t.Fatal(err)
					}
					head = ledger.Head{Seq: head.Seq + 1, Hash: hash, Version: head.Version + 1}
				}
				if err := st.Transact(context.Background(), ops); err != nil {
					t.Fatal(err)
				}
			})

			if out := mustCtl(t, b.env, b.args("outbox", "list")...); !strings.Contains(out, msg.ID) || !strings.Contains(out, "serve_production") || !strings.Contains(out, msg.WhatWillHappen) {
				t.Errorf("outbox list = %q, want the message", out)
			}
			if out := mustCtl(t, b.env, b.args("outbox", "ack", "--by", seed.DemoAdmin, "--note", "DMS-4411", msg.ID)...); !strings.Contains(out, "acknowledged "+msg.ID) {
				t.Errorf("outbox ack = %q", out)
			}
			if _, err := ctl(t, b.env, b.args("outbox", "ack", "--by", seed.DemoAdmin, msg.ID)...); err == nil || !strings.Contains(err.Error(), "already acknowledged") {
				t.Errorf("a second ack = %v, want refused", err)
			}
			if out := mustCtl(t, b.env, b.args("outbox", "list")...); strings.Contains(out, msg.ID) {
				t.Errorf("outbox list after the ack = %q, want it gone from the waiting list", out)
			}
			if out := mustCtl(t, b.env, b.args("outbox", "list", "--all")...); !strings.Contains(out, msg.ID) || !strings.Contains(out, "acknowledged") {
				t.Errorf("outbox list --all = %q, want it acknowledged", out)
			}

			if out := mustCtl(t, b.env, b.args("ledger", "verify", "--case", seed.Alvarez)...); !strings.Contains(out, "3 entries, intact") {
				t.Errorf("ledger verify = %q, want intact", out)
			}
			b.withStore(t, func(st store.Store) {
				k := ledger.EntryKey(seed.DemoTenant, seed.Alvarez, 2)
				it, err := st.Get(context.Background(), k)
				if err != nil {
					t.Fatal(err)
				}
				it.Attrs["body"] = []byte(strings.Replace(string(it.Bytes("body")), seed.DemoAttorney, "p_forger", 1))
				if err := st.Put(context.Background(), it); err != nil {
					t.Fatal(err)
				}
			})
			out, err := ctl(t, b.env, b.args("ledger", "verify", "--case", seed.Alvarez)...)
			if !errors.Is(err, errLedgerBroken) || !strings.Contains(out, "broken at seq 2") {
				t.Errorf("ledger verify after an edit = %q, %v; want exit 1 naming seq 2", out, err)
			}
			if _, err := ctl(t, b.env, b.args("ledger", "verify", "--case", "m_nowhere")...); err == nil || errors.Is(err, errLedgerBroken) {
				t.Errorf("ledger verify of no matter = %v, want an error that is not a broken ledger", err)
			}
		})
	}
}
