package mcp

// PageRequest pages a protocol-level list for req (tools/list,
// prompts/list, resources/list, resources/templates/list): it reads params.cursor, opens
// it against the list's exact sorted keys bound to req's method, credential
// id and era, and returns the page [start, end) of keys with at most size
// entries and the next cursor ("" on the last page). A params object that
// does not decode, or a cursor that is unissued, edited, foreign, stale or
// expired, is the -32602 *Error every list answers alike (docs/contracts.md §2;
// MCP server/utilities/pagination §Error Handling).
func (s *CursorSealer) PageRequest(req *Request, keys []string, size int) (start, end int, next string, err error) {
	var cursor *string
	if raw := req.Params.Get("cursor"); !isNull(raw) {
		c, ok := stringOf(raw)
		if !ok {
			return 0, 0, "", InvalidParams("Invalid params: the field 'cursor' has the wrong type.")
		}
		cursor = &c
	}
	scope := CursorScope{Method: req.Method, CredentialID: req.Credential.ID, Keys: keys, Era: req.CursorEra()}
	start, end, next, err = s.PageOf(cursor, scope, size, req.Started)
	if err != nil {
		return 0, 0, "", InvalidParams("Invalid params: the cursor is not one this server issued for this list, or it has expired.")
	}
	return start, end, next, nil
}
