package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// -h and --help print the usage to stdout and succeed (exit 0), before or
// after a command, and open nothing.
func TestHelpPrintsTheUsageToStdoutAndSucceeds(t *testing.T) {
	data := t.TempDir() // no store: opening one would fail
	for _, args := range [][]string{
		{"-h"}, {"--help"}, {"-help"},
		{"keys", "-h"},
		{"keys", "mint", "-h"}, {"keys", "list", "--help"}, {"keys", "revoke", "-h"},
		{"tenant", "create", "-h"}, {"import", "-h"}, {"table", "create", "-h"},
		{"screen", "add", "-h"}, {"screen", "remove", "--help"}, {"signin-link", "-h"},
		{"autonomy", "set", "-h"}, {"autonomy", "list", "--help"},
		{"outbox", "list", "-h"}, {"outbox", "ack", "--help"}, {"ledger", "verify", "-h"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(context.Background(), append([]string{"--data", data}, args...), func(string) string { return "" }, &out, &errOut)
			if err != nil {
				t.Errorf("run(%v) = %v, want nil (exit 0)", args, err)
			}
			if !strings.HasPrefix(out.String(), "usage: custodyctl") {
				t.Errorf("stdout = %q, want the usage", out.String())
			}
			if errOut.Len() != 0 {
				t.Errorf("stderr = %q, want nothing", errOut.String())
			}
		})
	}
	t.Run("an unknown flag is still an error, its usage on stderr", func(t *testing.T) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), []string{"--data", data, "keys", "list", "--nope"}, func(string) string { return "" }, &out, &errOut)
		if err == nil || out.Len() != 0 || !strings.Contains(errOut.String(), "usage: custodyctl") {
			t.Errorf("run(keys list --nope) = %v, stdout %q, stderr %q; want an error and the usage on stderr", err, out.String(), errOut.String())
		}
	})
}
