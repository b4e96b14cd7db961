// Command custodyctl administers Custody: it mints, lists and revokes API
// keys. Against a running local server it goes through the server's
// loopback-only admin endpoint (the embedded store is locked by the server);
// otherwise it opens the data folder's store file directly.
//
//	custodyctl keys mint   --owner p_dana_whitfield --scopes "read docs:read" [--tenant demo] [--class client_safe] [--allow m_a,m_b] [--label …] [--rate-read N] [--rate-expensive N]
//	custodyctl keys list   [--tenant demo]
//	custodyctl keys revoke [--tenant demo] <credential-id>
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/shared/admin"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/store/filestore"
)

const usage = `usage:
  custodyctl [--data DIR] keys mint --owner PRINCIPAL --scopes "read docs:read" [--tenant demo]
             [--class standard|client_safe] [--allow CASE_ID,...] [--label TEXT]
             [--rate-read N] [--rate-expensive N]
  custodyctl [--data DIR] keys list [--tenant demo]
  custodyctl [--data DIR] keys revoke [--tenant demo] CREDENTIAL_ID
`

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "custodyctl:", err)
		os.Exit(1)
	}
}

// keyAdmin is what custodyctl needs, served by the running server or the file.
type keyAdmin interface {
	Mint(ctx context.Context, req admin.MintRequest) (admin.Minted, error)
	List(ctx context.Context, tenant string) ([]admin.KeyInfo, error)
	Revoke(ctx context.Context, tenant, id string) error
	Close() error
}

func run(args []string, out io.Writer) error {
	global := flag.NewFlagSet("custodyctl", flag.ContinueOnError)
	data := global.String("data", datadir.Default, "the local server's data folder")
	global.Usage = func() { fmt.Fprint(os.Stderr, usage) }
	if err := global.Parse(args); err != nil {
		return err
	}
	rest := global.Args()
	if len(rest) < 2 || rest[0] != "keys" {
		global.Usage()
		return errors.New("unknown command")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm, err := connect(datadir.Dir(*data))
	if err != nil {
		return err
	}
	defer adm.Close()

	fl := flag.NewFlagSet("keys "+rest[1], flag.ContinueOnError)
	tenant := fl.String("tenant", "demo", "tenant id")
	switch rest[1] {
	case "mint":
		owner := fl.String("owner", "", "owner principal id (required)")
		scopes := fl.String("scopes", "read docs:read", "scopes, space- or comma-separated")
		class := fl.String("class", "standard", "credential class: standard or client_safe")
		allow := fl.String("allow", "", "matter allow-list, comma-separated (default: unrestricted)")
		label := fl.String("label", "", "a label for the key")
		rateRead := fl.Int("rate-read", 0, "requests per minute in the read lane (default: configured)")
		rateExp := fl.Int("rate-expensive", 0, "requests per minute in the expensive lane (default: configured)")
		if err := fl.Parse(rest[2:]); err != nil {
			return err
		}
		if *owner == "" {
			return errors.New("keys mint: --owner is required")
		}
		req := admin.MintRequest{Tenant: *tenant, Owner: *owner, Scopes: *scopes, Class: *class, Label: *label}
		if *allow != "" {
			req.AllowList = strings.Split(*allow, ",")
		}
		if *rateRead > 0 || *rateExp > 0 {
			req.RateLimits = map[string]int{}
			if *rateRead > 0 {
				req.RateLimits["read"] = *rateRead
			}
			if *rateExp > 0 {
				req.RateLimits["expensive"] = *rateExp
			}
		}
		m, err := adm.Mint(ctx, req)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\n", m.Key)
		fmt.Fprintf(os.Stderr, "minted %s for %s (%s); the key is shown once\n", m.CredentialID, m.Owner, strings.Join(m.Scopes, " "))
		return nil
	case "list":
		if err := fl.Parse(rest[2:]); err != nil {
			return err
		}
		keys, err := adm.List(ctx, *tenant)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CREDENTIAL\tOWNER\tSCOPES\tCLASS\tALLOW\tREVOKED\tLABEL")
		for _, k := range keys {
			allowList := "*"
			if k.AllowList != nil {
				allowList = strings.Join(k.AllowList, ",")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\t%s\n", k.CredentialID, k.Owner,
				strings.Join(k.Scopes, " "), k.Class, allowList, k.Revoked, k.Label)
		}
		return tw.Flush()
	case "revoke":
		if err := fl.Parse(rest[2:]); err != nil {
			return err
		}
		if fl.NArg() != 1 {
			return errors.New("keys revoke: name one credential id")
		}
		if err := adm.Revoke(ctx, *tenant, fl.Arg(0)); err != nil {
			return err
		}
		fmt.Fprintf(out, "revoked %s\n", fl.Arg(0))
		return nil
	}
	global.Usage()
	return fmt.Errorf("unknown command keys %s", rest[1])
}

// connect reaches the running server's admin endpoint when there is one,
// else opens the store file directly.
func connect(dir datadir.Dir) (keyAdmin, error) {
	addr, err := dir.Read(datadir.AdminAddrFile)
	if err == nil {
		token, terr := dir.Read(datadir.AdminTokenFile)
		if terr != nil {
			return nil, fmt.Errorf("read the admin token: %w", terr)
		}
		c := &remote{base: "http://" + addr, token: token, http: &http.Client{Timeout: 10 * time.Second}}
		if c.alive() {
			return c, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if _, err := os.Stat(dir.StorePath()); err != nil {
		return nil, fmt.Errorf("no store at %s: start the server once with `make run`", dir.StorePath())
	}
	st, err := filestore.Open(dir.StorePath(), filestore.Options{})
	if err != nil {
		return nil, fmt.Errorf("open %s (is a server running on it?): %w", dir.StorePath(), err)
	}
	return &local{st: st}, nil
}

// local administers keys on the store file.
type local struct{ st *filestore.Store }

func (l *local) Mint(ctx context.Context, req admin.MintRequest) (admin.Minted, error) {
	key, cred, err := admin.Mint(ctx, l.st, req, time.Now())
	if err != nil {
		return admin.Minted{}, err
	}
	return admin.Minted{Key: key, KeyInfo: admin.Info(cred)}, nil
}

func (l *local) List(ctx context.Context, tenant string) ([]admin.KeyInfo, error) {
	creds, err := auth.List(ctx, l.st, tenant)
	if err != nil {
		return nil, err
	}
	out := make([]admin.KeyInfo, len(creds))
	for i, c := range creds {
		out[i] = admin.Info(c)
	}
	return out, nil
}

func (l *local) Revoke(ctx context.Context, tenant, id string) error {
	return auth.Revoke(ctx, l.st, tenant, id)
}

func (l *local) Close() error { return l.st.Close() }

// remote administers keys through the running server's admin endpoint.
type remote struct {
	base, token string
	http        *http.Client
}

func (r *remote) alive() bool {
	resp, err := r.do(context.Background(), http.MethodGet, "/admin/keys?tenant=", nil)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

func (r *remote) do(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Content-Type", "application/json")
	return r.http.Do(req)
}

func (r *remote) call(ctx context.Context, method, path string, body, out any) error {
	resp, err := r.do(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return fmt.Errorf("server answered %s: %s", resp.Status, e.Error)
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}

func (r *remote) Mint(ctx context.Context, req admin.MintRequest) (admin.Minted, error) {
	var m admin.Minted
	return m, r.call(ctx, http.MethodPost, "/admin/keys", req, &m)
}

func (r *remote) List(ctx context.Context, tenant string) ([]admin.KeyInfo, error) {
	var keys []admin.KeyInfo
	return keys, r.call(ctx, http.MethodGet, "/admin/keys?tenant="+url.QueryEscape(tenant), nil, &keys)
}

func (r *remote) Revoke(ctx context.Context, tenant, id string) error {
	return r.call(ctx, http.MethodPost, "/admin/keys/"+url.PathEscape(id)+"/revoke?tenant="+url.QueryEscape(tenant), nil, nil)
}

func (r *remote) Close() error { return nil }
