package approvals

import (
	"net/url"
	"strings"
)

// OIDCSettings are the approval page's OIDC settings as configuration
// gives them: the client, and where its secret is kept.
type OIDCSettings struct {
	OIDCClient
	// ClientSecretARN names the Secrets Manager secret whose SecretString
	// is the client secret ("" = a public client). The Lambda reads it at
	// cold start into ClientSecret.
	ClientSecretARN string
}

// OIDCFromEnv reads the OIDC_* variables through getenv — the one parser of
// the Lambda's configuration (functions/mcp) and the dev server
// (scripts/dev):
//
//	OIDC_CLIENT_ID               the approval page's client at OAUTH_ISSUER; set, the sign-in page
//	                             offers the firm's sign-in (OIDC code flow with PKCE S256)
//	OIDC_AUTHORIZATION_ENDPOINT  required with OIDC_CLIENT_ID: the issuer's authorization_endpoint
//	OIDC_TOKEN_ENDPOINT          required with OIDC_CLIENT_ID: the issuer's token_endpoint
//	OIDC_CLIENT_SECRET_ARN       a Secrets Manager secret holding the client secret (client_secret_basic);
//	                             empty: a public client
//	OIDC_SCOPES                  scopes requested besides openid, space-separated (default none)
//
// It returns nil when OIDC_CLIENT_ID is empty (sign-in links only), and
// refuses the other variables then. oauthConfigured says whether
// OAUTH_ISSUER is set: the ID tokens are that issuer's, verified with its
// key set, so OIDC without it is refused. allowHTTP admits http endpoints
// (emulator and loopback runs). Each problem is reported to bad once, with
// the variable it concerns.
func OIDCFromEnv(getenv func(string) string, oauthConfigured, allowHTTP bool, bad func(name, problem string)) *OIDCSettings {
	s := &OIDCSettings{
		OIDCClient: OIDCClient{ClientID: getenv("OIDC_CLIENT_ID"), AuthorizationEndpoint: getenv("OIDC_AUTHORIZATION_ENDPOINT"),
			TokenEndpoint: getenv("OIDC_TOKEN_ENDPOINT"), Scopes: strings.Fields(getenv("OIDC_SCOPES"))},
		ClientSecretARN: getenv("OIDC_CLIENT_SECRET_ARN"),
	}
	if s.ClientID == "" {
		for _, v := range []struct{ name, value string }{
			{"OIDC_AUTHORIZATION_ENDPOINT", s.AuthorizationEndpoint}, {"OIDC_TOKEN_ENDPOINT", s.TokenEndpoint},
			{"OIDC_CLIENT_SECRET_ARN", s.ClientSecretARN}, {"OIDC_SCOPES", strings.Join(s.Scopes, " ")},
		} {
			if v.value != "" {
				bad(v.name, "is refused without OIDC_CLIENT_ID")
			}
		}
		return nil
	}
	if !oauthConfigured {
		bad("OIDC_CLIENT_ID", "is refused without OAUTH_ISSUER (the ID tokens are that issuer's)")
	}
	if strings.ContainsAny(s.ClientID, " \t\r\n\"\\") {
		bad("OIDC_CLIENT_ID", "is not a client id (no white space, quotes or backslashes)")
	}
	for _, v := range []struct{ name, value string }{
		{"OIDC_AUTHORIZATION_ENDPOINT", s.AuthorizationEndpoint}, {"OIDC_TOKEN_ENDPOINT", s.TokenEndpoint},
	} {
		u, err := url.Parse(v.value)
		switch {
		case v.value == "":
			bad(v.name, "is required with OIDC_CLIENT_ID")
		case err != nil || u.Host == "" || u.User != nil || u.Fragment != "" || u.Opaque != "":
			bad(v.name, "must be an absolute URL without user info or fragment")
		case u.Scheme != "https" && !(allowHTTP && u.Scheme == "http"):
			bad(v.name, "must be https (http only in emulator and loopback runs)")
		}
	}
	if a := s.ClientSecretARN; a != "" {
		parts := strings.SplitN(a, ":", 7)
		if len(parts) != 7 || parts[0] != "arn" || parts[2] != "secretsmanager" || parts[5] != "secret" || parts[6] == "" {
			bad("OIDC_CLIENT_SECRET_ARN", "is not a Secrets Manager secret ARN (arn:<partition>:secretsmanager:<region>:<account>:secret:<name>)")
		}
	}
	for _, sc := range s.Scopes {
		if strings.ContainsAny(sc, "\"\\") {
			bad("OIDC_SCOPES", "has an entry that is not a scope token")
			break
		}
	}
	return s
}
