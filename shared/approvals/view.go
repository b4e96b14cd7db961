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
}).ParseFS(files, "templates/*.html"))

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
}

// sessionView is the signed-in principal as every page shows it.
type sessionView struct {
	Principal   personView
	Tenant      string
	Method      string
	ExpiresAt   time.Time
	SignOutCSRF string
}

// personView is a principal as a page names them.
type personView struct {
	ID, Name, Role string
	Licensed       bool
}

func principalView(p records.Principal) personView {
	return personView{ID: p.ID, Name: p.Name, Role: string(p.Role), Licensed: p.Licensed}
}
