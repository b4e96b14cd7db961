package approvals

// CSRFToken is the token a session (its cookie value) must post with a
// form, for the external tests' direct POSTs (a browser reads it from the
// page).
var CSRFToken = csrfToken
