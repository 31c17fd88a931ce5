package server

import (
	"sort"
	"strings"

	"github.com/drover-io/drover/structs"
)

// resolveID finds the one object whose ID is id or starts with it: exact
// matches win; several matches are a KindInvalid error listing them; none
// is KindNotFound.
func resolveID[T any](kind, id string, exact T, found bool, matches []T, idOf func(T) string) (T, error) {
	var zero T
	if found {
		return exact, nil
	}
	if id == "" {
		return zero, structs.Invalid("missing %s ID", kind)
	}
	switch len(matches) {
	case 0:
		return zero, structs.NotFound(kind, id)
	case 1:
		return matches[0], nil
	}
	ids := make([]string, len(matches))
	for i, m := range matches {
		ids[i] = idOf(m)
	}
	sort.Strings(ids)
	return zero, structs.Invalid("prefix %q matched multiple %ss: %s", id, kind, strings.Join(ids, ", "))
}
