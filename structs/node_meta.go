package structs

import (
	"maps"
	"slices"
	"strings"
	"unicode"
)

// NodeMeta is a node's metadata as its client holds it (GET and POST
// /v1/client/metadata): the static metadata of the agent's configuration
// (with the client's default keys), the dynamic metadata set through the
// API at run time, and the two merged, which is the node's Meta.
type NodeMeta struct {
	// Meta is Static with Dynamic applied: a dynamic value replaces the
	// static one, and a dynamic nil removes the key.
	Meta map[string]string
	// Dynamic is the metadata set through the API: a value by key, nil
	// for a key unset.
	Dynamic map[string]*string
	// Static is the metadata of the agent's configuration.
	Static map[string]string
}

// MergeNodeMeta returns static with dynamic applied: a dynamic value
// replaces the static one, a dynamic nil removes the key.
func MergeNodeMeta(static map[string]string, dynamic map[string]*string) map[string]string {
	out := maps.Clone(static)
	if out == nil {
		out = make(map[string]string, len(dynamic))
	}
	for k, v := range dynamic {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = *v
	}
	return out
}

// ValidateNodeMetaKey checks a key of dynamic node metadata. Keys are
// read in constraints and interpolation as ${meta.<key>}, so a key is
// dotted identifiers: parts separated by ".", each a letter or "_"
// followed by letters, digits, "_" and "-" (HCL's identifiers).
func ValidateNodeMetaKey(key string) error {
	if key == "" {
		return Invalid("node metadata key must not be empty")
	}
	for _, part := range strings.Split(key, ".") {
		if !validIdentifier(part) {
			return Invalid("node metadata key %q is invalid: a key is identifiers separated by \".\", "+
				"each starting with a letter or \"_\" and holding only letters, digits, \"_\" and \"-\" "+
				"(it is read as ${meta.<key>} in constraints)", key)
		}
	}
	return nil
}

// validIdentifier reports whether s is an HCL identifier.
func validIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case unicode.IsLetter(r), r == '_':
		case i > 0 && (unicode.IsDigit(r) || r == '-' || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc)):
		default:
			return false
		}
	}
	return true
}

// ValidateNodeMetaChanges checks a change of dynamic node metadata (a
// value to set, or nil to unset, by key): it names at least one key, and
// every key is valid. Keys are checked in order, so the error is stable.
func ValidateNodeMetaChanges(changes map[string]*string) error {
	if len(changes) == 0 {
		return Invalid("missing required Meta object: name at least one key to set (\"k\": \"v\") or unset (\"k\": null)")
	}
	for _, k := range slices.Sorted(maps.Keys(changes)) {
		if err := ValidateNodeMetaKey(k); err != nil {
			return err
		}
	}
	return nil
}

// CopyNodeMeta returns a copy of dynamic node metadata whose values are
// its own (a nil value, an unset key, stays nil); nil stays nil.
func CopyNodeMeta(m map[string]*string) map[string]*string {
	if m == nil {
		return nil
	}
	c := make(map[string]*string, len(m))
	for k, v := range m {
		if v != nil {
			s := *v
			v = &s
		}
		c[k] = v
	}
	return c
}
