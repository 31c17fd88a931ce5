package httpapi

import (
	"net/http"
	"time"

	"github.com/drover-io/drover/acl"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// registerSearchRoutes registers the prefix and fuzzy searches.
func (s *Server) registerSearchRoutes(rt *router) {
	write := func(p string, e endpoint) { rt.handle(p, s.wrap(e), http.MethodPut, http.MethodPost) }
	write("/v1/search", s.search)
	write("/v1/search/fuzzy", s.fuzzySearch)
}

// searchBody is the body of both searches: Nomad's SearchRequest or
// FuzzySearchRequest, whose client also sends its query options in it.
type searchBody struct {
	Prefix  string
	Text    string
	Context string
	// Nomad's QueryOptions, embedded in its requests' bodies; the
	// namespace counts when the URL names none.
	Region     string
	Namespace  string
	AllowStale bool
	WaitIndex  uint64
	WaitTime   time.Duration
	Params     map[string]string
	Headers    map[string]string
	AuthToken  string
	Filter     string
	PerPage    int32
	NextToken  string
	Reverse    bool
}

// search is PUT|POST /v1/search {"Prefix", "Context"}: the IDs that start
// with the prefix -> {"Matches": {context: [ID]}, "Truncations":
// {context: bool}}.
func (s *Server) search(w http.ResponseWriter, req *http.Request) (any, error) {
	_, resp, err := s.runSearch(w, req, false)
	if err != nil {
		return nil, err
	}
	out := struct {
		Matches     map[string][]string
		Truncations map[string]bool
	}{Matches: map[string][]string{}, Truncations: resp.Truncations}
	for c, ms := range resp.Matches {
		ids := make([]string, len(ms))
		for i, m := range ms {
			ids[i] = m.ID
		}
		out.Matches[c] = ids
	}
	return out, nil
}

// fuzzyMatch is one match of a fuzzy search, as Nomad's FuzzyMatch.
type fuzzyMatch struct {
	ID    string
	Scope []string `json:",omitempty"`
}

// fuzzySearch is PUT|POST /v1/search/fuzzy {"Text", "Context"}: the
// objects whose name holds the text -> {"Matches": {context: [{"ID",
// "Scope"}]}, "Truncations": {context: bool}}.
func (s *Server) fuzzySearch(w http.ResponseWriter, req *http.Request) (any, error) {
	_, resp, err := s.runSearch(w, req, true)
	if err != nil {
		return nil, err
	}
	out := struct {
		Matches     map[string][]fuzzyMatch
		Truncations map[string]bool
	}{Matches: map[string][]fuzzyMatch{}, Truncations: resp.Truncations}
	for c, ms := range resp.Matches {
		fm := make([]fuzzyMatch, len(ms))
		for i, m := range ms {
			fm[i] = fuzzyMatch{ID: m.ID, Scope: m.Scope}
		}
		out.Matches[c] = fm
	}
	return out, nil
}

// runSearch reads a search's body, asks the server and keeps, with ACLs
// enabled, only what the request's token may read.
func (s *Server) runSearch(w http.ResponseWriter, req *http.Request, fuzzy bool) (*searchBody, *structs.SearchResponse, error) {
	var body searchBody
	if err := decodeBody(req, &body); err != nil {
		return nil, nil, err
	}
	opts, err := queryOptions(req)
	if err != nil {
		return nil, nil, err
	}
	if req.URL.Query().Get("namespace") == "" && body.Namespace != "" {
		opts.Namespace = body.Namespace
	}
	opts.Prefix = ""
	text := body.Prefix
	if fuzzy {
		text = body.Text
	}
	resp, err := rpcapi.Search.Call(req.Context(), s.rpc, &structs.SearchRequest{Text: text, Context: body.Context, Fuzzy: fuzzy, QueryOptions: opts})
	if err != nil {
		return nil, nil, err
	}
	filterSearch(grantOf(req.Context()), resp)
	setQueryMeta(w, resp.QueryMeta)
	return &body, resp, nil
}

// filterSearch drops, with ACLs enabled, the matches the grant may not
// read: namespaced objects of namespaces it may not read jobs (or
// variables) of, nodes and node pools without node:read, namespaces it
// has no capability in.
func filterSearch(g *aclGrant, resp *structs.SearchResponse) {
	if g == nil || g.acl.IsManagement() {
		return
	}
	for c, ms := range resp.Matches {
		kept := ms[:0]
		for _, m := range ms {
			var ok bool
			switch c {
			case structs.SearchContextNodes, structs.SearchContextNodePools:
				ok = g.acl.AllowNodeRead()
			case structs.SearchContextNamespaces:
				ok = g.acl.AllowNamespace(m.ID)
			case structs.SearchContextVariables:
				ok = g.acl.AllowVariableOperation(m.Namespace, m.ID, acl.VariablesCapabilityList)
			default:
				ok = g.acl.AllowNamespaceOperation(m.Namespace, acl.NamespaceCapabilityReadJob)
			}
			if ok {
				kept = append(kept, m)
			}
		}
		resp.Matches[c] = kept
	}
}
