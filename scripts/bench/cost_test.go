package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testPrices are round prices for a bill checked by hand.
func testPrices() *prices {
	p := &prices{Date: "2026-12-01", Region: "us-east-1", Currency: "USD",
		FrontDoor:      map[string]price{"rest": {3.50, "s"}, "http": {1.00, "s"}, "url": {0, "s"}},
		LambdaRequests: price{0.20, "s"}, LambdaGBSecond: price{0.0000133334, "s"},
		DynamoDBWrite: price{0.625, "s"}, DynamoDBRead: price{0.125, "s"}, SQSRequests: price{0.40, "s"},
		Logs: price{0.50, "s"}, TransferOut: price{0.09, "s"}}
	p.Assumptions.MBPerVCPU = assumption{1769, "s"}
	p.Assumptions.RoundTripMs = assumption{5, "s"}
	p.Assumptions.LogEventOverhead = assumption{26, "s"}
	return p
}

// A known call, priced by hand:
//
// (a governed get_matter's shape since issue 19, item 6: the batch read,
// the matter's read, the audit row's put and a tenth of a rate lease's
// update)
//
//	duration: 1.000 ms CPU × 1769/1024 = 1.7275 ms, + 3.1 requests × 5 ms
//	          = 17.2275 → 18 ms billed; 0.018 s × 1 GB × $0.0000133334 × 1M
//	          = $0.2400012
//	DynamoDB: 3 RRU × $0.125 = $0.375; 2.1 WRU × $0.625 = $1.3125
//	logs:     (190 + 1 × 26) B × 1M / 2^30 × $0.50 = $0.100582838
//	url:      $0 + $0.20 + 0.2400012 + 0.375 + 1.3125 + 0.100582838 = $2.228084038
//	rest:     the same + $3.50; http: + $1.00
//	transfer: 3000 B × 1M / 2^30 × $0.09 = $0.251457095 (beside the total)
func TestPriceCallOfAKnownCall(t *testing.T) {
	m := callMeasure{Call: "get_matter", Era: "2025-11-25", DynamoDBRequests: 3.1, ReadUnits: 3, WriteUnits: 2.1,
		CPUMicrosPerCall: 1000, LogBytesPerCall: 190, LogEventsPerCall: 1, ResponseBytes: 3000}
	tests := []struct {
		front string
		want  float64
	}{
		{"url", 2.228084038},
		{"http", 3.228084038},
		{"rest", 5.728084038},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("behind %s a million calls cost $%.4f", tt.front, tt.want), func(t *testing.T) {
			m.Front = tt.front
			got, err := priceCall(m, 1024, testPrices())
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got.TotalUSD-tt.want) > 1e-9 {
				t.Errorf("TotalUSD = %.9f, want %.9f; lines %+v", got.TotalUSD, tt.want, got.Lines)
			}
			if got.BilledMs != 18 {
				t.Errorf("BilledMs = %v, want 18", got.BilledMs)
			}
			if math.Abs(got.TransferOut.USD-0.251457095) > 1e-9 {
				t.Errorf("TransferOut = %.9f, want 0.251457095", got.TransferOut.USD)
			}
			sum := 0.0
			for _, l := range got.Lines {
				sum += l.USD
			}
			if math.Abs(sum-got.TotalUSD) > 1e-12 || len(got.Lines) != 6 {
				t.Errorf("%d lines summing to %v, want 6 summing to the total %v", len(got.Lines), sum, got.TotalUSD)
			}
		})
	}
	t.Run("a bigger function gets no more than one vCPU's speed", func(t *testing.T) {
		m.Front = "url"
		got, err := priceCall(m, 3538, testPrices())
		if err != nil {
			t.Fatal(err)
		}
		// 1.000 ms × max(1, 1769/3538) + 15.5 ms = 16.5 → 17 ms.
		if got.BilledMs != 17 {
			t.Errorf("BilledMs at 3538 MB = %v, want 17", got.BilledMs)
		}
	})
	t.Run("a task create pays its SQS message", func(t *testing.T) {
		task := m
		task.Front, task.QueueSendsPerCall = "url", 1
		got, err := priceCall(task, 1024, testPrices())
		if err != nil {
			t.Fatal(err)
		}
		if want := 2.228084038 + 0.40; math.Abs(got.TotalUSD-want) > 1e-9 || len(got.Lines) != 7 {
			t.Errorf("TotalUSD = %.9f in %d lines, want %.9f in 7", got.TotalUSD, len(got.Lines), want)
		}
	})
	t.Run("an unknown front door is an error", func(t *testing.T) {
		m.Front = "alb"
		if _, err := priceCall(m, 1024, testPrices()); err == nil {
			t.Error("priceCall(alb) = nil error, want one")
		}
	})
}

// The committed prices file is complete: every price and assumption with a
// source, a date, and each front door.
func TestThePricesFileIsComplete(t *testing.T) {
	p, err := loadPrices("prices.json")
	if err != nil {
		t.Fatalf("loadPrices(prices.json) error = %v", err)
	}
	if p.DynamoDBWrite.USD != 0.625 || p.DynamoDBRead.USD != 0.125 {
		t.Errorf("DynamoDB on-demand = $%v/M WRU, $%v/M RRU; want the prices since 1 November 2024 ($0.625, $0.125)", p.DynamoDBWrite.USD, p.DynamoDBRead.USD)
	}
	t.Run("a file missing a source is refused", func(t *testing.T) {
		raw, err := os.ReadFile("prices.json")
		if err != nil {
			t.Fatal(err)
		}
		bad := bytes.Replace(raw, []byte(`"source": "https://aws.amazon.com/lambda/pricing/ (requests)"`), []byte(`"source": ""`), 1)
		if bytes.Equal(bad, raw) {
			t.Fatal("the Lambda requests price's source was not found to blank out")
		}
		path := filepath.Join(t.TempDir(), "prices.json")
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := loadPrices(path); err == nil {
			t.Error("loadPrices() of a price without a source = nil error, want one")
		}
	})
}

// The printed table carries each get_matter's arithmetic and the verdict.
func TestWriteCostPrintsTheArithmeticAndTheVerdict(t *testing.T) {
	in := &costInput{Schema: costSchema, LambdaMemoryMB: 1024, EmulatorOutOfProcess: true}
	for _, f := range frontDoors {
		in.Calls = append(in.Calls, callMeasure{Front: f, Call: "get_matter", Era: "2025-11-25", DynamoDBRequests: 3.1, ReadUnits: 3, WriteUnits: 2.1,
			CPUMicrosPerCall: 1000, LogBytesPerCall: 190, LogEventsPerCall: 1, ResponseBytes: 3000})
	}
	r, err := priceAll(in, testPrices(), "prices.json")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r.writeCost(&out)
	for _, want := range []string{
		"get_matter (2025-11-25) behind the url front door",
		"ceil(1.000 ms CPU × 1769/1024 + 3.10 requests × 5 ms) = 18 ms × 1.000 GB × $0.0000133334/GB-s",
		"2.10 WRU × $0.625/M",
		"$5.73", "$3.23", "$2.23",
		"$2.23 — MISSES the target (≤ $2.00)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the cost table lacks %q:\n%s", want, out.String())
		}
	}
}
