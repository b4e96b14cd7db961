package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/blobtest"
	"github.com/custodymcp/custody/shared/blob/s3local"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
	"github.com/custodymcp/custody/shared/uploads"
)

// laneFile is a small file to upload and its digests (one part).
type laneFile struct {
	body []byte
	args map[string]any
}

func newLaneFile(n int, seedByte byte, grant string) laneFile {
	body := blobtest.Pattern(n, seedByte)
	sum := sha256.Sum256(body)
	return laneFile{body: body, args: map[string]any{"grant_token": grant, "case_id": seed.Alvarez,
		"filename": fmt.Sprintf("exhibit %d.pdf", seedByte), "size_bytes": n,
		"sha256": hex.EncodeToString(sum[:]), "part_sha256": []string{base64.StdEncoding.EncodeToString(sum[:])}}}
}

// structured returns a tools/call answer's structuredContent.
func structured(t testing.TB, msg map[string]any) map[string]any {
	t.Helper()
	res, _ := msg["result"].(map[string]any)
	sc, ok := res["structuredContent"].(map[string]any)
	if !ok {
		t.Fatalf("no structuredContent in %v", msg)
	}
	return sc
}

// beginAndPut begins an upload of f through url and PUTs its one part
// with the returned URL and headers.
func beginAndPut(t testing.TB, url, key, sid string, f laneFile) string {
	t.Helper()
	_, _, msg := mcpPost(t, url, key, sid, toolCall(uploads.ToolBegin, f.args))
	sc := structured(t, msg)
	if sc["status"] != "executed" {
		t.Fatalf("begin_upload_session through %s: %v", url, sc)
	}
	data := sc["data"].(map[string]any)
	part := data["parts"].([]any)[0].(map[string]any)
	h := http.Header{}
	for k, v := range part["headers"].(map[string]any) {
		h.Set(k, v.(string))
	}
	if status, code := blobtest.Send(t, http.MethodPut, part["url"].(string), h, f.body); status != http.StatusOK {
		t.Fatalf("PUT the part: %d %s", status, code)
	}
	return data["upload_id"].(string)
}

// laneKey mints, with custodyctl, a write key allowed a thousand writes a
// minute, and returns it with its credential id.
func laneKey(t testing.TB, ctl func(args ...string) (string, string)) (key, credID string) {
	t.Helper()
	out, notes := ctl("keys", "mint", "--owner", seed.DemoAttorney, "--scopes", "read write", "--label", "upload agent", "--rate-write", "1000")
	id := regexp.MustCompile(`minted (cred_\w+)`).FindStringSubmatch(notes)
	if len(id) != 2 {
		t.Fatalf("keys mint said %q / %q", out, notes)
	}
	return strings.TrimSpace(out), id[1]
}

func ctlOf(t testing.TB, ctlBin, data string, env []string) func(args ...string) (string, string) {
	return func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(ctlBin, append([]string{"--data", data}, args...)...)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("custodyctl %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
		}
		return out.String(), errOut.String()
	}
}

func initSession(t testing.TB, url, key string) string {
	t.Helper()
	status, h, _ := mcpPost(t, url, key, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lane","version":"0"}}}`)
	if status != http.StatusOK || h.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize through %s: %d", url, status)
	}
	return h.Get("Mcp-Session-Id")
}

// TestSixtyFourUploadsRacingOneGrantAcrossTwoDevServersSpendItOnce is the
// race on the spend across processes (issue 16): two dev servers on one
// DynamoDB emulator, sharing one local S3 server (-s3), 64 verified
// uploads of one grant completed by 64 goroutines at once, alternating
// between the servers: one spends the grant, 63 are GRANT_INVALID with
// spent true, and their 63 objects are gone.
func TestSixtyFourUploadsRacingOneGrantAcrossTwoDevServersSpendItOnce(t *testing.T) {
	const n = 64
	devBin, ctlBin, minidynBin := buildTools(t)
	s3srv := s3local.Start(t, s3local.Options{})
	emu := start(t, "minidyn", minidynBin, nil, "-addr", "127.0.0.1:0", "-table", "custody")
	endpoint := emu.await(t, minidynURL, 30*time.Second)
	data := t.TempDir()
	env := []string{"STORE_ENGINE=dynamodb", "DYNAMODB_TABLE=custody", "DYNAMODB_ENDPOINT=" + endpoint}
	a := start(t, "dev A", devBin, env, "-addr", "127.0.0.1:0", "-data", data, "-s3", s3srv.URL)
	urlA := a.await(t, serving, 2*time.Minute)
	b := start(t, "dev B", devBin, env, "-addr", "127.0.0.1:0", "-data", data, "-s3", s3srv.URL)
	urlB := b.await(t, serving, time.Minute)
	urls := []string{urlA, urlB}

	ctl := ctlOf(t, ctlBin, data, env)
	key, credID := laneKey(t, ctl)
	out, _ := ctl("grant", "mint", "--key", credID, "--case", seed.Alvarez, "--by", seed.DemoAdmin)
	grant := strings.TrimSpace(out)
	// A grant allows at most uploads.MaxMaxOpen open uploads; the race needs
	// 64 at once, so the fixture raises the cap on the row itself.
	st := dynamostore.New(dynamotest.NewClient(endpoint), "custody", dynamostore.Options{})
	if _, err := st.Update(context.Background(), uploads.GrantKey(uploads.HashToken(grant)),
		store.Update{Set: map[string]any{"max_open": int64(n)}}, store.Exists()); err != nil {
		t.Fatal(err)
	}
	sid := initSession(t, urlA, key)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = beginAndPut(t, urls[i%2], key, sid, newLaneFile(1000+i, byte(i), grant))
	}

	answers := make([]map[string]any, n)
	startRace := make(chan struct{})
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			args, _ := json.Marshal(map[string]any{"grant_token": grant, "upload_id": ids[i]})
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"complete_upload","arguments":%s}}`, 100+i, args)
			<-startRace
			r := servertest.DoURL(t, urls[i%2], http.MethodPost, []byte(body),
				"Authorization: Bearer "+key, "Mcp-Session-Id: "+sid, "MCP-Protocol-Version: 2025-11-25")
			_ = json.Unmarshal(r.Body, &answers[i])
		})
	}
	close(startRace)
	wg.Wait()

	ctx := context.Background()
	engine, err := blob.New(s3local.NewClient(s3srv.URL), s3local.Buckets, blob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stored := func(ref blob.Ref) bool { _, err := engine.HeadObject(ctx, ref); return err == nil }
	spent, refused, gone := 0, 0, 0
	for i, msg := range answers {
		sc := structured(t, msg)
		id, _ := uploads.ParseUploadID(ids[i])
		if sc["status"] == "executed" {
			spent++
			if !stored(blob.Verified(id)) {
				t.Errorf("the winner's object is not in verified/")
			}
			continue
		}
		e, _ := sc["error"].(map[string]any)
		if e["class"] != "GRANT_INVALID" || e["spent"] != true {
			t.Errorf("upload %d = %v, want GRANT_INVALID spent true", i, e)
		}
		refused++
		if !stored(blob.Incoming(id)) && !stored(blob.Verified(id)) {
			gone++
		}
	}
	if spent != 1 || refused != n-1 || gone != n-1 {
		t.Errorf("%d spent, %d refused, %d losers' objects gone; want 1, %d, %d", spent, refused, gone, n-1, n-1)
	}
}

// TestAnUploadBegunBeforeARestartAnswersBeginAgain shows what the README
// says of the dev server (s3local keeps multipart uploads in progress in
// memory): an upload begun and PUT before a restart answers VALIDATION,
// spent false, "begin a new upload session", and is abandoned; the grant
// still works for a new upload, which the scan gate judges, and its
// object persists in the data folder across the next restart.
func TestAnUploadBegunBeforeARestartAnswersBeginAgain(t *testing.T) {
	devBin, ctlBin, _ := buildTools(t)
	data := t.TempDir()
	ctl := ctlOf(t, ctlBin, data, nil)
	dev := start(t, "dev", devBin, nil, "-addr", "127.0.0.1:0", "-data", data)
	fileServing := regexp.MustCompile(`serving MCP at (http://\S+/mcp) on`)
	url := dev.await(t, fileServing, 2*time.Minute)
	key, credID := laneKey(t, ctl)
	out, _ := ctl("grant", "mint", "--key", credID, "--case", seed.Alvarez, "--by", seed.DemoAdmin)
	grant := strings.TrimSpace(out)
	sid := initSession(t, url, key)
	lost := beginAndPut(t, url, key, sid, newLaneFile(5000, 1, grant))

	restart := func() string {
		t.Helper()
		dev.stop(t)
		dev = start(t, "dev (restarted)", devBin, nil, "-addr", "127.0.0.1:0", "-data", data)
		return dev.await(t, fileServing, 2*time.Minute)
	}
	url = restart()
	sid = initSession(t, url, key)
	complete := func(id string) map[string]any {
		_, _, msg := mcpPost(t, url, key, sid, toolCall(uploads.ToolComplete, map[string]any{"grant_token": grant, "upload_id": id}))
		return structured(t, msg)
	}
	sc := complete(lost)
	e, _ := sc["error"].(map[string]any)
	if e["class"] != "VALIDATION" || e["spent"] != false || !strings.Contains(fmt.Sprint(e["message"]), "Begin a new upload session") {
		t.Fatalf("completing an upload begun before the restart = %v, want VALIDATION spent false, begin again", sc)
	}
	_, _, msg := mcpPost(t, url, key, sid, toolCall("get_upload_status", map[string]any{"upload_id": lost}))
	if st := structured(t, msg); st["state"] != "abandoned" {
		t.Errorf("its status = %v, want abandoned", st["state"])
	}

	fresh := beginAndPut(t, url, key, sid, newLaneFile(6000, 2, grant))
	if sc := complete(fresh); sc["status"] != "executed" {
		t.Fatalf("a new upload with the same grant = %v, want executed", sc)
	}
	// The scan gate judges it from the copy's event, asynchronously.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		_, _, msg := mcpPost(t, url, key, sid, toolCall("get_upload_status", map[string]any{"upload_id": fresh}))
		if st := structured(t, msg)["state"]; (st != "scan_pending" && st != "clean") || time.Now().After(deadline) {
			break // judged clean and taken into review (issue 18's intake)
		}
	}
	url = restart()
	sid = initSession(t, url, key)
	_, _, msg = mcpPost(t, url, key, sid, toolCall("get_upload_status", map[string]any{"upload_id": fresh}))
	// The scan gate judged it (the signature engine: clean) and intake
	// took it into review before the restart; the row and the object both
	// outlive the restart.
	if st := structured(t, msg); st["state"] != "in_review" {
		t.Errorf("after another restart the finished upload = %v, want in_review", st["state"])
	}
	id, _ := uploads.ParseUploadID(fresh)
	if _, err := os.Stat(datadir.Dir(data).Path("blobs/buckets/custody-staging/verified/" + string(id))); err != nil {
		t.Errorf("the finished object is not in the data folder: %v", err)
	}
}

// stop ends the process as Ctrl-C would (SIGTERM), waiting for it to exit.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
