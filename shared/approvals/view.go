package approvals

import (
	"embed"
	"html/template"
	"net/http"
	"time"

	"github.com/custodymcp/custody/shared/records"
)

// The page's templates and stylesheet, compiled into the binary.
//
//go:embed templates/*.html static/style.css
var files embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2 Jan 2006, 15:04 UTC")
	},
	// batch and individual split the decision list: the rows one may tick
	// for a selection, and the rows decided one by one.
	"batch":      func(rows []Proposal) []Proposal { return filter(rows, true) },
	"individual": func(rows []Proposal) []Proposal { return filter(rows, false) },
	// pair hands a row template the page's view beside the row.
	"pair": func(v *view, p any) rowPair {
		if ptr, ok := p.(*Proposal); ok {
			return rowPair{V: v, P: *ptr}
		}
		pr, _ := p.(Proposal)
		return rowPair{V: v, P: pr}
	},
}).ParseFS(files, "templates/*.html"))

// rowPair is a row with the page's view, for a row template.
type rowPair struct {
	V *view
	P Proposal
}

func filter(rows []Proposal, batch bool) []Proposal {
	var out []Proposal
	for _, r := range rows {
		if r.BatchEligible == batch {
			out = append(out, r)
		}
	}
	return out
}

var style, _ = files.ReadFile("static/style.css")

// serveStyle is GET /approvals/style.css, the one stylesheet (the policy's
// style-src 'self').
func serveStyle(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	_, _ = w.Write(style)
}

// view is what a template is given.
type view struct {
	// Base is the public base URL, for every link and form action.
	Base  string
	Title string
	// Session is the signed-in principal; nil on the sign-in pages.
	Session *sessionView

	// message.html
	Heading, Text string

	// signin.html
	Next          string
	OIDC          bool
	OIDCURL       string
	Token         string
	LinkPrincipal personView
	LinkInvalid   bool

	// inbox.html
	Decidable, Own list
	// Approver: the principal approves (a licensed attorney); else the
	// decision list is not theirs.
	Approver bool

	// results.html: one outcome per proposal asked; OK when every one was
	// approved (or, for a decline, declined).
	Results []resultView
	OK      bool
	Asked   string

	// handoff.html: the hand-off link's review set (Approver as above).
	Handoff *handoffView

	// proposal.html: one proposal, and on the confirmation page the nonce
	// its approval must carry.
	Detail       *Proposal
	Nonce        string
	NonceExpires time.Time
}

// resultView is one proposal's outcome as a results page shows it.
type resultView struct {
	ID, CaseID, Noun, Status, Code, Text string
}

// sessionView is the signed-in principal as every page shows it.
type sessionView struct {
	Principal   personView
	Tenant      string
	Method      string
	ExpiresAt   time.Time
	SignOutCSRF string
	// The decision forms' tokens.
	ReviewCSRF, ConfirmCSRF, DecideCSRF, DeclineCSRF string
}

// personView is a principal as a page names them.
type personView struct {
	ID, Name, Role string
	Licensed       bool
}

func principalView(p records.Principal) personView {
	return personView{ID: p.ID, Name: p.Name, Role: string(p.Role), Licensed: p.Licensed}
}
