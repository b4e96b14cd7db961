package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/custodymcp/custody/scripts/internal/engine"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/s3local"
	"github.com/custodymcp/custody/shared/intake"
	"github.com/custodymcp/custody/shared/intake/importer"
	"github.com/custodymcp/custody/shared/intake/review"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/gate"
	"github.com/custodymcp/custody/shared/scan/guardduty"
	"github.com/custodymcp/custody/shared/scan/signature"
	"github.com/custodymcp/custody/shared/store"
)

// Privilege review and the import of a folder (issue 18).

// MaxImportDepth is how deep import DIR walks: a file at most 8 folders
// below DIR's own level counts (DIR/a/b/c/d/e/f/g/file.pdf is depth 8).
const MaxImportDepth = 8

// skippedFile is a folder entry import DIR does not send, and why.
type skippedFile struct{ path, why string }

// collectFiles walks dir for import: regular files only, never following
// a symbolic link; symbolic links, devices, pipes, sockets and anything
// deeper than MaxImportDepth are skipped and reported.
func collectFiles(dir string) ([]string, []skippedFile, error) {
	info, err := os.Lstat(dir)
	if err != nil {
		return nil, nil, err
	}
	if !info.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a folder", dir)
	}
	var files []string
	var skipped []skippedFile
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			skipped = append(skipped, skippedFile{p, "unreadable: " + err.Error()})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		depth := len(strings.Split(rel, string(filepath.Separator)))
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			skipped = append(skipped, skippedFile{rel, "a symbolic link (never followed)"})
		case d.IsDir():
			if depth >= MaxImportDepth {
				skipped = append(skipped, skippedFile{rel, fmt.Sprintf("a folder deeper than %d levels", MaxImportDepth)})
				return fs.SkipDir
			}
		case !t.IsRegular():
			skipped = append(skipped, skippedFile{rel, "not a regular file (a device, pipe or socket)"})
		default:
			files = append(files, rel)
		}
		return nil
	})
	return files, skipped, err
}

// importDir imports every regular file of dir into matter for by, one line
// per file: its verdict, its document and its text state. A refusal (who,
// the scanner OFF) stops it at the first file, before anything is written.
func importDir(ctx context.Context, op operator, tenant, matter, by, dir string, stdout io.Writer) error {
	files, skipped, err := collectFiles(dir)
	if err != nil {
		return fmt.Errorf("import %s: %w", dir, err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tVERDICT\tDOCUMENT\tTEXT\tNOTE")
	for _, s := range skipped {
		fmt.Fprintf(tw, "%s\tskipped\t-\t-\t%s\n", shown(s.path), s.why)
	}
	counts := map[string]int{}
	for _, rel := range files {
		line, err := importOne(ctx, op, tenant, matter, by, filepath.Join(dir, rel))
		var refused *review.Refused
		if errors.As(err, &refused) || errors.Is(err, errRefusedRemote) || errors.Is(err, store.ErrNotFound) {
			tw.Flush()
			return fmt.Errorf("import refused: %w", err)
		}
		if err != nil {
			fmt.Fprintf(tw, "%s\terror\t-\t-\t%s\n", shown(rel), err)
			counts["error"]++
			continue
		}
		counts[line.Verdict]++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", shown(rel), line.Verdict, dash(line.DocumentID), dash(string(line.TextState)), line.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d files: %d clean (pending review), %d infected, %d scan_failed, %d skipped, %d errors; %d entries skipped\n",
		len(files), counts["clean"], counts["infected"], counts["scan_failed"], counts[importer.Skipped], counts["error"], len(skipped))
	if len(files) > 0 && counts["clean"] > 0 {
		fmt.Fprintf(stdout, "next: custodyctl documents pending --case %s\n", matter)
	}
	if counts["error"] > 0 {
		return fmt.Errorf("import: %d of %d files were not imported (see their lines)", counts["error"], len(files))
	}
	return nil
}

// shown is a path as printed: quoted when it holds a character a terminal
// would not show as itself (a line break, a direction override).
func shown(p string) string {
	for _, r := range p {
		if !unicode.IsGraphic(r) || unicode.Is(unicode.Cf, r) {
			return strconv.QuoteToGraphic(p)
		}
	}
	return p
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func importOne(ctx context.Context, op operator, tenant, matter, by, path string) (importer.Line, error) {
	f, err := os.Open(path)
	if err != nil {
		return importer.Line{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return importer.Line{}, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return importer.Line{}, err
	}
	file := importer.File{Name: filepath.Base(path), Size: n, SHA256: hex.EncodeToString(h.Sum(nil)), Body: f}
	return op.ImportFile(ctx, tenant, matter, by, file)
}

func listPending(ctx context.Context, op operator, tenant, matter string, stdout io.Writer) error {
	docs, err := op.PendingDocuments(ctx, tenant, matter)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DOCUMENT\tTITLE\tFILENAME\tTYPE\tPAGES\tTEXT\tUPLOADED BY\tAT")
	for _, d := range docs {
		text := string(d.TextState)
		if d.TextReason != "" {
			text += " (" + d.TextReason + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", d.DocumentID, d.Title, d.Filename, d.MediaType, d.Pages, text,
			d.Credential, d.CreatedAt.UTC().Format(time.RFC3339))
	}
	if len(docs) == 0 {
		fmt.Fprintf(tw, "(no document of %s waits for review)\n", matter)
	}
	return tw.Flush()
}

func reviewDocument(ctx context.Context, op operator, req review.Request, stdout io.Writer) error {
	res, err := op.ReviewDocument(ctx, req)
	if err != nil {
		return err
	}
	d := res.Document
	if req.Withdraw {
		fmt.Fprintf(stdout, "withdrew %s (%s) of %s: kept, never served\n", d.ID, d.Title, d.Matter)
		return nil
	}
	fmt.Fprintf(stdout, "reviewed %s of %s by %s: %q, kind %s, privilege %s, %d chunks; now served\n",
		d.ID, d.Matter, d.ReviewedBy, d.Title, d.Kind, d.Privilege, res.Chunks)
	return nil
}

// errRefusedRemote is a 403 (who, the scanner OFF) or 404 (no such matter)
// of the dev server's import route: refused before anything was written.
var errRefusedRemote = errors.New("refused")

func (r *remote) PendingDocuments(ctx context.Context, tenant, matter string) ([]review.Pending, error) {
	var out []review.Pending
	return out, r.call(ctx, http.MethodGet, "/admin/documents/pending?tenant="+url.QueryEscape(tenant)+"&case="+url.QueryEscape(matter), nil, &out)
}

func (r *remote) ReviewDocument(ctx context.Context, req review.Request) (review.Result, error) {
	var out review.Result
	return out, r.call(ctx, http.MethodPost, "/admin/documents/review", req, &out)
}

// ImportFile streams the file to the running dev server, which stages it
// and runs its gate and intake.
func (r *remote) ImportFile(ctx context.Context, tenant, matter, by string, f importer.File) (importer.Line, error) {
	body, err := io.ReadAll(f.Body)
	if err != nil {
		return importer.Line{}, err
	}
	q := url.Values{"tenant": {tenant}, "case": {matter}, "by": {by}, "filename": {f.Name}, "sha256": {f.SHA256}}
	var line importer.Line
	err = r.call(ctx, http.MethodPost, "/admin/import/file?"+q.Encode(), body, &line)
	if err != nil && (strings.Contains(err.Error(), "answered 403") || strings.Contains(err.Error(), "answered 404")) {
		return line, fmt.Errorf("%w: %s", errRefusedRemote, err)
	}
	return line, err
}

func (d *direct) PendingDocuments(ctx context.Context, tenant, matter string) ([]review.Pending, error) {
	return review.ListPending(ctx, d.st, tenant, matter)
}

func (d *direct) ReviewDocument(ctx context.Context, req review.Request) (review.Result, error) {
	res, err := review.Review(ctx, d.st, req, d.now())
	if errors.Is(err, review.ErrNoDocument) {
		return res, fmt.Errorf("no document %s waits for review in %s (custodyctl documents pending --case %s)", req.Document, req.Matter, req.Matter)
	}
	return res, err
}

// ImportFile, on a store custodyctl opened: the file engine of a stopped
// dev server (its blob folder opened here, its gate and intake run in this
// process with the dev server's default engine, or SCANNER_ENGINE), or
// DynamoDB on AWS (the file written to the staging bucket, the upload row
// polled until GuardDuty's verdict and the scangate function's intake
// land).
func (d *direct) ImportFile(ctx context.Context, tenant, matter, by string, f importer.File) (importer.Line, error) {
	if d.imp == nil {
		if err := d.openImporter(ctx); err != nil {
			return importer.Line{}, err
		}
	}
	return d.imp.Import(ctx, tenant, matter, by, f)
}

func (d *direct) openImporter(ctx context.Context) error {
	var objects blob.Store
	var buckets blob.Buckets
	var sc scan.Scanner
	engineName := d.getenv("SCANNER_ENGINE")
	if d.eng.Engine == engine.File {
		buckets = s3local.Buckets
		srv, err := s3local.New(s3local.Options{Dir: d.dir.Path("blobs")})
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = hs.Serve(ln) }()
		d.closers = append(d.closers, func() { _ = hs.Close() })
		if objects, err = blob.New(s3local.NewClient("http://"+ln.Addr().String()), buckets, blob.Options{}); err != nil {
			return err
		}
		switch engineName {
		case "", "signature":
			sc = signature.New()
		case "off":
		default:
			return fmt.Errorf("SCANNER_ENGINE %q: a stopped dev server's import runs signature or off (start the server with -scanner for clamd)", engineName)
		}
	} else {
		buckets = blob.Buckets{Staging: d.getenv("STAGING_BUCKET"), Record: d.getenv("RECORD_BUCKET")}
		if buckets.Staging == "" || buckets.Record == "" {
			return errors.New("import on DynamoDB needs STAGING_BUCKET and RECORD_BUCKET (the stack's buckets)")
		}
		cfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return err
		}
		if objects, err = blob.New(s3.NewFromConfig(cfg), buckets, blob.Options{}); err != nil {
			return err
		}
		switch engineName {
		case "guardduty":
			if sc, err = guardduty.New(buckets.Staging); err != nil {
				return err
			}
		case "off":
		default:
			return errors.New("import on AWS needs SCANNER_ENGINE=guardduty (the stack's engine) or off (refused)")
		}
	}
	in, err := intake.New(intake.Options{Store: d.st, Blob: objects})
	if err != nil {
		return err
	}
	d.closers = append(d.closers, func() { _ = in.Close() })
	g, err := gate.New(gate.Options{Store: d.st, Blob: objects, Buckets: buckets, Scanner: sc, Intake: in})
	if err != nil {
		return err
	}
	d.imp, err = importer.New(importer.Options{Store: d.st, Blob: objects, Gate: g, Now: d.now})
	return err
}
