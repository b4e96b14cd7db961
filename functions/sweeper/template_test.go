package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	cfn "github.com/custodymcp/custody/infra/cfntemplate"
)

func loadTemplate(t *testing.T) *cfn.Template {
	t.Helper()
	tpl, err := cfn.Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// Every variable config.go reads is set on SweeperFunction, and no other.
func TestTemplateSetsEveryVariableTheSweepersConfigReads(t *testing.T) {
	read, err := cfn.GetenvLiterals("config.go")
	if err != nil {
		t.Fatal(err)
	}
	var set []string
	for k := range cfn.Map(cfn.Path(loadTemplate(t).Props("SweeperFunction"), "Environment", "Variables")) {
		set = append(set, k)
	}
	sort.Strings(set)
	if diff := cmp.Diff(read, set); diff != "" {
		t.Errorf("variables config.go reads (-) vs SweeperFunction sets (+):\n%s", diff)
	}
	vars := cfn.Map(cfn.Path(loadTemplate(t).Props("SweeperFunction"), "Environment", "Variables"))
	if !cmp.Equal(vars["TASK_QUEUE_URL"], cfn.Ref("TaskQueue")) || !cmp.Equal(vars["TASK_DEAD_LETTER_QUEUE_URL"], cfn.Ref("TaskDeadLetterQueue")) {
		t.Errorf("the sweeper's queues are %v and %v, want Ref TaskQueue and Ref TaskDeadLetterQueue", vars["TASK_QUEUE_URL"], vars["TASK_DEAD_LETTER_QUEUE_URL"])
	}
}

// The sweeper runs every minute on an EventBridge schedule, is not
// retried (the next minute sweeps again), and may do only what its duties
// do: read and conditionally write the table, send to the task queue, read
// and delete on the dead-letter queue, and the upload lane's objects under
// incoming/, verified/ and quarantine/; no secret, no batch read.
func TestTemplateSweeperRunsEveryMinuteWithItsOwnPermissions(t *testing.T) {
	tpl := loadTemplate(t)
	p := tpl.Props("SweeperFunction")
	var schedules []string
	for _, ev := range cfn.Map(p["Events"]) {
		if cfn.Map(ev)["Type"] == "Schedule" && cfn.Path(ev, "Properties", "Enabled") == true {
			schedules = append(schedules, fmt.Sprint(cfn.Path(ev, "Properties", "Schedule")))
		}
	}
	if !slices.Equal(schedules, []string{"rate(1 minute)"}) {
		t.Errorf("the sweeper's schedules = %v, want one enabled rate(1 minute)", schedules)
	}
	if got := cfn.Path(p, "EventInvokeConfig", "MaximumRetryAttempts"); got != 0 {
		t.Errorf("EventInvokeConfig.MaximumRetryAttempts = %v, want 0", got)
	}
	granted := map[string][]string{}
	for _, pol := range cfn.Slice(p["Policies"]) {
		for _, s := range cfn.Slice(cfn.Map(pol)["Statement"]) {
			st := cfn.Map(s)
			for _, r := range cfn.OneOrMany(st["Resource"]) {
				for _, a := range cfn.OneOrMany(st["Action"]) {
					key := fmt.Sprint(r)
					granted[key] = append(granted[key], fmt.Sprint(a))
				}
			}
		}
	}
	for k := range granted {
		sort.Strings(granted[k])
	}
	want := map[string][]string{
		fmt.Sprint(cfn.GetAtt("Table", "Arn")): {"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:GetItem",
			"dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"},
		fmt.Sprint(cfn.Sub("${Table.Arn}/index/GSI1")):       {"dynamodb:Query"},
		fmt.Sprint(cfn.GetAtt("TaskQueue", "Arn")):           {"sqs:SendMessage"},
		fmt.Sprint(cfn.GetAtt("TaskDeadLetterQueue", "Arn")): {"sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"},
		// The upload lane's duties (issue 17).
		fmt.Sprint(cfn.Sub("${StagingBucket.Arn}/incoming/*")): {"s3:AbortMultipartUpload", "s3:DeleteObject", "s3:GetObject",
			"s3:GetObjectTagging", "s3:PutObject", "s3:PutObjectTagging"},
		fmt.Sprint(cfn.Sub("${StagingBucket.Arn}/verified/*")): {"s3:DeleteObject", "s3:GetObject", "s3:GetObjectTagging",
			"s3:PutObject", "s3:PutObjectTagging"},
		fmt.Sprint(cfn.Sub("${StagingBucket.Arn}/quarantine/*")): {"s3:GetObject", "s3:GetObjectTagging", "s3:PutObject", "s3:PutObjectTagging"},
	}
	if diff := cmp.Diff(want, granted); diff != "" {
		t.Errorf("the sweeper's permissions by resource (-want +got):\n%s", diff)
	}
}
