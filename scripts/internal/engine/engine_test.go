package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/scripts/internal/engine"
	"github.com/custodymcp/custody/scripts/internal/engine/dynamoengine"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

func TestFromEnv(t *testing.T) {
	for _, c := range []struct {
		name    string
		env     map[string]string
		want    engine.Config
		wantErr string // a variable the error must name
	}{
		{"nothing set is the file engine", nil, engine.Config{Engine: "file"}, ""},
		{"file", map[string]string{"STORE_ENGINE": "file"}, engine.Config{Engine: "file"}, ""},
		{"dynamodb on AWS", map[string]string{"STORE_ENGINE": "dynamodb", "DYNAMODB_TABLE": "custody-prod"},
			engine.Config{Engine: "dynamodb", Table: "custody-prod"}, ""},
		{"dynamodb on an emulator", map[string]string{"STORE_ENGINE": "dynamodb", "DYNAMODB_TABLE": "custody", "DYNAMODB_ENDPOINT": "http://127.0.0.1:8000"},
			engine.Config{Engine: "dynamodb", Table: "custody", Endpoint: "http://127.0.0.1:8000"}, ""},
		{"unknown engine", map[string]string{"STORE_ENGINE": "postgres"}, engine.Config{}, "STORE_ENGINE"},
		{"dynamodb without a table", map[string]string{"STORE_ENGINE": "dynamodb"}, engine.Config{}, "DYNAMODB_TABLE"},
		{"a table name DynamoDB refuses", map[string]string{"STORE_ENGINE": "dynamodb", "DYNAMODB_TABLE": "a b"}, engine.Config{}, "DYNAMODB_TABLE"},
		{"an endpoint that is not a URL", map[string]string{"STORE_ENGINE": "dynamodb", "DYNAMODB_TABLE": "custody", "DYNAMODB_ENDPOINT": "127.0.0.1:8000"},
			engine.Config{}, "DYNAMODB_ENDPOINT"},
		{"DynamoDB variables with the file engine", map[string]string{"DYNAMODB_TABLE": "custody"}, engine.Config{}, "STORE_ENGINE=dynamodb"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := engine.FromEnv(func(k string) string { return c.env[k] })
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Errorf("FromEnv = %+v, %v; want an error naming %s", got, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("FromEnv = %v", err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("FromEnv (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenBothEngines(t *testing.T) {
	ctx := context.Background()
	dir := datadir.Dir(t.TempDir())

	file, err := engine.Config{Engine: engine.File}.Open(ctx, dir, nil)
	if err != nil {
		t.Fatalf("Open(file) = %v", err)
	}
	// The file engine is one process's: a second open waits for the lock,
	// then fails.
	if second, err := (engine.Config{Engine: engine.File}).Open(ctx, dir, nil); err == nil {
		second.Close()
		t.Error("a second Open of the file engine succeeded; bbolt should hold the lock")
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}

	emu := dynamotest.NewServer(t)
	table := dynamotest.CreateTable(t, emu.Client())
	dyn := engine.Config{Engine: engine.DynamoDB, Table: table, Endpoint: emu.URL}
	st, err := dyn.Open(ctx, dir, dynamoengine.Open)
	if err != nil {
		t.Fatalf("Open(dynamodb) = %v", err)
	}
	defer st.Close()
	it := store.Item{PK: "p", SK: "s", Version: 1}
	if err := st.Put(ctx, it); err != nil {
		t.Fatalf("Put through the opened engine = %v", err)
	}
	// Any number of engines share the table.
	other, err := dyn.Open(ctx, dir, dynamoengine.Open)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Get(ctx, it.Key()); err != nil {
		t.Errorf("the other engine's Get = %v", err)
	}

	if _, err := dyn.Open(ctx, dir, nil); !errors.Is(err, engine.ErrNoDynamoDB) {
		t.Errorf("Open(dynamodb) in a build without the DynamoDB engine = %v, want ErrNoDynamoDB", err)
	}

	missing := engine.Config{Engine: engine.DynamoDB, Table: "no-such-table", Endpoint: emu.URL}
	if _, err := missing.Open(ctx, dir, dynamoengine.Open); !errors.Is(err, engine.ErrNoTable) || !strings.Contains(err.Error(), "custodyctl table create") {
		t.Errorf("Open of a missing table = %v, want ErrNoTable naming custodyctl table create", err)
	}
}

func TestValidTableNameIsDynamostoresRule(t *testing.T) {
	for _, name := range []string{"", "ab", "abc", "custody-prod", "custody.prod_1", "has space", "ünïcode",
		strings.Repeat("a", 255), strings.Repeat("a", 256), "tab\tle", "a/b", "UPPER-lower.09"} {
		if got, want := engine.ValidTableName(name), dynamostore.ValidTableName(name); got != want {
			t.Errorf("ValidTableName(%q) = %v, dynamostore.ValidTableName = %v", name, got, want)
		}
	}
}
