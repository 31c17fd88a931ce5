package server

import (
	"context"
	"fmt"
	"slices"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

const (
	// searchPrefixLimit bounds the matches of a prefix search per
	// context; searchFuzzyLimit those of a fuzzy search (Nomad's
	// defaults: limit_query, limit_results).
	searchPrefixLimit = 20
	searchFuzzyLimit  = 100
	// searchMinFuzzyText is the shortest text a fuzzy search takes
	// (Nomad's min_term_length).
	searchMinFuzzyText = 2
)

// prefixContexts are the contexts of a prefix search, in the order "all"
// searches them; fuzzyContexts those of a fuzzy search. Plugins and
// volumes (CSI) are contexts drover has nothing in: asked for, they
// answer empty.
var (
	prefixContexts = []string{
		structs.SearchContextJobs, structs.SearchContextEvals, structs.SearchContextAllocs, structs.SearchContextNodes,
		structs.SearchContextNodePools, structs.SearchContextDeployments, structs.SearchContextNamespaces,
		structs.SearchContextVariables, structs.SearchContextPlugins, structs.SearchContextVolumes,
	}
	fuzzyContexts = []string{
		structs.SearchContextJobs, structs.SearchContextGroups, structs.SearchContextTasks, structs.SearchContextServices,
		structs.SearchContextCommands, structs.SearchContextImages, structs.SearchContextClasses, structs.SearchContextNodes,
		structs.SearchContextNodePools, structs.SearchContextNamespaces, structs.SearchContextVariables,
		structs.SearchContextPlugins, structs.SearchContextVolumes,
	}
)

// Search finds objects by ID prefix, or with Fuzzy by a case-insensitive
// substring of their names, in the request's namespace ("*": all) for
// namespaced objects. Each context's matches are sorted (for a fuzzy
// search, names that start with the text first) and cut at a limit, with
// Truncations telling which were.
func (s *Server) Search(ctx context.Context, req *structs.SearchRequest) (*structs.SearchResponse, error) {
	if req == nil {
		return nil, structs.Invalid("missing search request")
	}
	contexts, limit := prefixContexts, searchPrefixLimit
	if req.Fuzzy {
		contexts, limit = fuzzyContexts, searchFuzzyLimit
		if len(req.Text) < searchMinFuzzyText {
			return nil, structs.Invalid("fuzzy search text %q is too short: give at least %d characters", req.Text, searchMinFuzzyText)
		}
	}
	want := req.Context
	if want == "" {
		want = structs.SearchContextAll
	}
	if want != structs.SearchContextAll {
		if !slices.Contains(contexts, want) {
			return nil, structs.Invalid("context %q is not searchable here: use %s or one of %s", want, structs.SearchContextAll, strings.Join(contexts, ", "))
		}
		contexts = []string{want}
	}
	resp := &structs.SearchResponse{}
	ns := namespaceOf(&req.QueryOptions)
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		resp.Matches = map[string][]structs.SearchMatch{}
		resp.Truncations = map[string]bool{}
		sr := &searcher{st: st, ws: ws, ns: ns, text: req.Text, fuzzy: req.Fuzzy}
		for _, c := range contexts {
			found, err := sr.search(c)
			if err != nil {
				return 0, fmt.Errorf("search %s: %w", c, err)
			}
			sortMatches(found, req.Text, req.Fuzzy)
			resp.Truncations[c] = len(found) > limit
			if len(found) > limit {
				found = found[:limit]
			}
			resp.Matches[c] = found
		}
		return st.LatestIndex(), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// searcher finds the matches of one search in one state.
type searcher struct {
	st    *state.StateStore
	ws    memdb.WatchSet
	ns    string // the request's namespace, "*" for all
	text  string
	fuzzy bool
}

// matchID reports whether an ID matches: by prefix, or fuzzily by a
// case-insensitive substring.
func (sr *searcher) match(id string) bool {
	if sr.fuzzy {
		return strings.Contains(strings.ToLower(id), strings.ToLower(sr.text))
	}
	return strings.HasPrefix(id, sr.text)
}

func (sr *searcher) search(c string) ([]structs.SearchMatch, error) {
	switch c {
	case structs.SearchContextJobs, structs.SearchContextGroups, structs.SearchContextTasks, structs.SearchContextServices,
		structs.SearchContextCommands, structs.SearchContextImages, structs.SearchContextClasses:
		return sr.jobs(c)
	case structs.SearchContextEvals:
		evals, err := sr.st.EvalsByIDPrefix(sr.ws, sr.text)
		return namespaced(sr, evals, err, func(e *structs.Evaluation) (string, string) { return e.ID, e.Namespace })
	case structs.SearchContextAllocs:
		allocs, err := sr.st.AllocsByIDPrefix(sr.ws, sr.text)
		return namespaced(sr, allocs, err, func(a *structs.Allocation) (string, string) { return a.ID, a.Namespace })
	case structs.SearchContextDeployments:
		ds, err := sr.st.DeploymentsByIDPrefix(sr.ws, sr.text)
		return namespaced(sr, ds, err, func(d *structs.Deployment) (string, string) { return d.ID, d.Namespace })
	case structs.SearchContextNodes:
		return sr.nodes()
	case structs.SearchContextNodePools:
		pools, err := sr.st.NodePools(sr.ws, "")
		return global(sr, pools, err, func(p *structs.NodePool) string { return p.Name })
	case structs.SearchContextNamespaces:
		nss, err := sr.st.Namespaces(sr.ws, "")
		return global(sr, nss, err, func(n *structs.Namespace) string { return n.Name })
	case structs.SearchContextVariables:
		vars, err := sr.st.Variables(sr.ws, sr.ns, "")
		out, err := namespaced(sr, vars, err, func(v *structs.VariableEncrypted) (string, string) { return v.Path, v.Namespace })
		for i := range out {
			if sr.fuzzy {
				out[i].Scope = []string{out[i].Namespace}
			}
		}
		return out, err
	}
	return []structs.SearchMatch{}, nil // plugins, volumes: drover has none
}

// namespaced returns the objects of the request's namespace whose ID
// matches.
func namespaced[T any](sr *searcher, objs []T, err error, key func(T) (id, ns string)) ([]structs.SearchMatch, error) {
	if err != nil {
		return nil, err
	}
	out := []structs.SearchMatch{}
	for _, o := range objs {
		id, ns := key(o)
		if inNamespace(sr.ns, ns) && sr.match(id) {
			out = append(out, structs.SearchMatch{ID: id, Namespace: ns})
		}
	}
	return out, nil
}

// global returns the objects outside namespaces whose name matches.
func global[T any](sr *searcher, objs []T, err error, name func(T) string) ([]structs.SearchMatch, error) {
	if err != nil {
		return nil, err
	}
	out := []structs.SearchMatch{}
	for _, o := range objs {
		if n := name(o); sr.match(n) {
			out = append(out, structs.SearchMatch{ID: n})
		}
	}
	return out, nil
}

// nodes matches nodes by ID prefix, or fuzzily by name (scoped by their
// ID, as Nomad's).
func (sr *searcher) nodes() ([]structs.SearchMatch, error) {
	if !sr.fuzzy {
		nodes, err := sr.st.NodesByIDPrefix(sr.ws, sr.text)
		return global(sr, nodes, err, func(n *structs.Node) string { return n.ID })
	}
	nodes, err := sr.st.Nodes(sr.ws)
	if err != nil {
		return nil, err
	}
	out := []structs.SearchMatch{}
	for _, n := range nodes {
		if sr.match(n.Name) {
			out = append(out, structs.SearchMatch{ID: n.Name, Scope: []string{n.ID}})
		}
	}
	return out, nil
}

// jobs matches jobs by ID, and with a fuzzy search their groups, tasks,
// services and the commands, images and classes of their tasks' config.
func (sr *searcher) jobs(c string) ([]structs.SearchMatch, error) {
	jobs, err := sr.st.Jobs(sr.ws)
	if err != nil {
		return nil, err
	}
	out := []structs.SearchMatch{}
	add := func(id, ns string, scope ...string) {
		if id != "" && sr.match(id) {
			m := structs.SearchMatch{ID: id, Namespace: ns}
			if sr.fuzzy {
				m.Scope = scope
			}
			out = append(out, m)
		}
	}
	for _, j := range jobs {
		if !inNamespace(sr.ns, j.Namespace) {
			continue
		}
		if c == structs.SearchContextJobs {
			add(j.ID, j.Namespace, j.Namespace)
			continue
		}
		for _, g := range j.TaskGroups {
			switch c {
			case structs.SearchContextGroups:
				add(g.Name, j.Namespace, j.Namespace, j.ID)
			case structs.SearchContextServices:
				for _, svc := range g.Services {
					add(svc.Name, j.Namespace, j.Namespace, j.ID, g.Name)
				}
			}
			for _, t := range g.Tasks {
				switch c {
				case structs.SearchContextTasks:
					add(t.Name, j.Namespace, j.Namespace, j.ID, g.Name)
				case structs.SearchContextServices:
					for _, svc := range t.Services {
						add(svc.Name, j.Namespace, j.Namespace, j.ID, g.Name, t.Name)
					}
				case structs.SearchContextCommands, structs.SearchContextImages, structs.SearchContextClasses:
					key := map[string]string{structs.SearchContextCommands: "command", structs.SearchContextImages: "image", structs.SearchContextClasses: "class"}[c]
					v, _ := t.Config[key].(string)
					add(v, j.Namespace, j.Namespace, j.ID, g.Name, t.Name)
				}
			}
		}
	}
	return out, nil
}

// sortMatches orders matches by ID (then scope); a fuzzy search puts the
// names that start with the text first.
func sortMatches(ms []structs.SearchMatch, text string, fuzzy bool) {
	lower := strings.ToLower(text)
	slices.SortStableFunc(ms, func(a, b structs.SearchMatch) int {
		if fuzzy {
			ap, bp := strings.HasPrefix(strings.ToLower(a.ID), lower), strings.HasPrefix(strings.ToLower(b.ID), lower)
			if ap != bp {
				if ap {
					return -1
				}
				return 1
			}
		}
		if c := strings.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return slices.Compare(a.Scope, b.Scope)
	})
}
