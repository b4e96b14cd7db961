// Command s3local serves the local S3 server (package s3local: gofakes3
// behind the strict front) on a loopback address, for tests that span
// processes and for trying the upload lane by hand. It prints the base URL
// as the first line on stdout once requests are accepted, and serves until
// SIGINT or SIGTERM. Requests must be signed with s3local.TestCredentials
// in region us-east-1.
//
//	s3local [-addr 127.0.0.1:0] [-dir FOLDER]
//
// Without -dir objects live in memory; with it they persist in the folder
// (multipart uploads in progress never do).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/custodymcp/custody/shared/blob/s3local"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (keep it loopback)")
	dir := flag.String("dir", "", "keep objects in this folder instead of memory")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := s3local.ListenAndServe(ctx, *addr, s3local.Options{Dir: *dir}, func(url string) { fmt.Println(url) })
	if err != nil {
		slog.Error("s3local", "addr", *addr, "err", err)
		os.Exit(1)
	}
}
