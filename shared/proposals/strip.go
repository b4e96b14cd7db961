package proposals

import (
	"slices"
	"strconv"
	"strings"
)

// Reserved reports whether key is a reserved args key (docs/decisions.md
// "Pipeline choices"), compared lower-cased with '-' folded to '_': an
// override flag (nonce, override, overrides, force, bypass, approved,
// approval_id), a matter or tenant id (case_id, tenant, tenant_id, any key
// starting with matter), the autonomy level, protocol metadata (_meta), a
// confirmation or skip field (any key starting with confirm, skip_ or
// auto_approve) — or a key shaped like a confirmation nonce.
func Reserved(key string) bool {
	k := strings.ReplaceAll(strings.ToLower(key), "-", "_")
	switch k {
	case "nonce", "override", "overrides", "force", "bypass", "approved", "approval_id",
		"case_id", "tenant", "tenant_id", "autonomy", "_meta":
		return true
	}
	for _, p := range [...]string{"confirm", "skip_", "auto_approve", "matter"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return NonceShaped(key)
}

// NonceShaped reports whether s is shaped like a confirmation nonce: cnf_
// and 32 hexadecimal digits (docs/contracts.md §6), in any letter case.
// Such a value, or key, is never carried into a proposal.
func NonceShaped(s string) bool {
	if len(s) != 36 || !strings.EqualFold(s[:4], "cnf_") {
		return false
	}
	for i := 4; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}

// Stripping bounds: a path longer than maxPathLen is cut (with "…"), and at
// most maxStripped paths are recorded (the rest are stripped all the same).
const (
	maxPathLen  = 200
	maxStripped = 50
)

// Strip removes from args, at any depth of objects and arrays, every
// reserved key (Reserved) with its value and every string value shaped
// like a confirmation nonce, and returns what is left and the paths it
// removed ("args.force", "args.options.case_id", "args.items.2"), in the
// order met (object keys sorted): paths only, never a value. An object
// left empty by stripping goes with what it held (its own path is not
// listed). args is not modified.
func Strip(args map[string]any) (clean map[string]any, stripped []string) {
	var s stripping
	clean, _ = stripValue(args, "args", &s).(map[string]any)
	if clean == nil {
		clean = map[string]any{}
	}
	return clean, s.paths
}

// stripping is what Strip removed so far: n values, the first paths.
type stripping struct {
	paths []string
	n     int
}

func record(s *stripping, path string) {
	s.n++
	if len(s.paths) >= maxStripped {
		return
	}
	if len(path) > maxPathLen {
		cut := maxPathLen
		for cut > 0 && !isRuneStart(path[cut]) {
			cut--
		}
		path = path[:cut] + "…"
	}
	s.paths = append(s.paths, path)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// stripValue returns v without its reserved keys and nonce-shaped
// strings; dropped reports a value removed as a whole (a nonce).
func stripValue(v any, path string, paths *stripping) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := path + "." + k
			if Reserved(k) {
				record(paths, p)
				continue
			}
			if s, ok := x[k].(string); ok && NonceShaped(s) {
				record(paths, p)
				continue
			}
			before := paths.n
			v := stripValue(x[k], p, paths)
			if m, isObject := v.(map[string]any); isObject && len(m) == 0 && paths.n > before {
				// An object that held only what was stripped was a
				// wrapper for it ({"options": {"case_id": …}}): it goes too.
				continue
			}
			out[k] = v
		}
		return out
	case []any:
		out := make([]any, 0, len(x))
		for i, e := range x {
			p := path + "." + strconv.Itoa(i)
			if s, ok := e.(string); ok && NonceShaped(s) {
				record(paths, p)
				continue
			}
			out = append(out, stripValue(e, p, paths))
		}
		return out
	}
	return v
}
