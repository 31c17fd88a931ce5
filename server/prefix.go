package server

import (
	"sort"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
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

// lookupAlloc returns the allocation with ID id or the one whose ID starts
// with it.
func lookupAlloc(ws memdb.WatchSet, st *state.StateStore, id string) (*structs.Allocation, error) {
	exact, err := st.AllocByID(ws, id)
	if err != nil {
		return nil, err
	}
	var matches []*structs.Allocation
	if exact == nil && id != "" {
		if matches, err = st.AllocsByIDPrefix(ws, prefixOf(id)); err != nil {
			return nil, err
		}
	}
	return resolveID("alloc", id, exact, exact != nil, matches, func(a *structs.Allocation) string { return a.ID })
}

// lookupEval returns the evaluation with ID id or the one whose ID starts
// with it.
func lookupEval(ws memdb.WatchSet, st *state.StateStore, id string) (*structs.Evaluation, error) {
	exact, err := st.EvalByID(ws, id)
	if err != nil {
		return nil, err
	}
	var matches []*structs.Evaluation
	if exact == nil && id != "" {
		if matches, err = st.EvalsByIDPrefix(ws, prefixOf(id)); err != nil {
			return nil, err
		}
	}
	return resolveID("evaluation", id, exact, exact != nil, matches, func(e *structs.Evaluation) string { return e.ID })
}

// lookupNode returns the node with ID id or the one whose ID starts with
// it.
func lookupNode(ws memdb.WatchSet, st *state.StateStore, id string) (*structs.Node, error) {
	exact, err := st.NodeByID(ws, id)
	if err != nil {
		return nil, err
	}
	var matches []*structs.Node
	if exact == nil && id != "" {
		if matches, err = st.NodesByIDPrefix(ws, id); err != nil {
			return nil, err
		}
	}
	return resolveID("node", id, exact, exact != nil, matches, func(n *structs.Node) string { return n.ID })
}
