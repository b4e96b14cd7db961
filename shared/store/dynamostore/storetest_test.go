package dynamostore_test

import (
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
	"github.com/custodymcp/custody/shared/store/storetest"
)

// TestConformance runs the port's conformance suite against the engine, each
// leaf test on a fresh emulator (minidyn creates tables outside its lock, so
// tables are never created beside live traffic) with a fresh table.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
		srv := dynamotest.NewServer(t)
		client := srv.Client()
		return dynamostore.New(client, dynamotest.CreateTable(t, client), dynamostore.Options{Now: now})
	})
}
