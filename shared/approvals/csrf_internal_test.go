package approvals

import "testing"

// A CSRF token is the session's for one form: another session's, another
// form's, an empty one and a truncated one are all refused.
func TestACSRFTokenIsOneSessionsForOneForm(t *testing.T) {
	a := &Session{key: newSecret(SessionPrefix, sessionBytes)}
	b := &Session{key: newSecret(SessionPrefix, sessionBytes)}
	tok := a.CSRF(FormSignOut)
	for _, c := range []struct {
		name  string
		s     *Session
		form  string
		token string
		want  bool
	}{
		{"its own session and form", a, FormSignOut, tok, true},
		{"another session's token", b, FormSignOut, tok, false},
		{"another form's token", a, "decide", tok, false},
		{"an empty token", a, FormSignOut, "", false},
		{"a truncated token", a, FormSignOut, tok[:len(tok)-1], false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.s.validCSRF(c.form, c.token); got != c.want {
				t.Errorf("validCSRF(%s) = %v, want %v", c.form, got, c.want)
			}
		})
	}
	if a.CSRF(FormSignOut) != tok {
		t.Error("a session's token for a form changed between two pages")
	}
}
