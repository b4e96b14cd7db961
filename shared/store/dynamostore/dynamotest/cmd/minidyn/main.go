// Command minidyn serves the minidyn DynamoDB emulator on a loopback address
// for tests that span processes. It prints the base URL as the first line on
// stdout once requests are accepted, and serves until SIGINT or SIGTERM.
//
//	minidyn [-addr 127.0.0.1:0] [-table custody]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (keep it loopback)")
	table := flag.String("table", "", "create the Custody table under this name before serving")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := dynamotest.ListenAndServe(ctx, *addr, *table, func(url string) { fmt.Println(url) })
	if err != nil {
		slog.Error("minidyn", "addr", *addr, "err", err)
		os.Exit(1)
	}
}
