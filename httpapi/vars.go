package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// registerVariableRoutes adds the endpoints of variables and of the
// keyring, as Nomad's.
func (s *Server) registerVariableRoutes(rt *router) {
	rt.handle("/v1/vars", s.wrap(s.varList), http.MethodGet)
	rt.handle("/v1/var/{path...}", s.wrap(s.varRead), http.MethodGet)
	rt.handle("/v1/var/{path...}", s.wrapStatus(s.varWrite), http.MethodPut, http.MethodPost)
	rt.handle("/v1/var/{path...}", s.wrapStatus(s.varDelete), http.MethodDelete)
	rt.handle("/v1/operator/keyring/keys", s.wrap(s.keyringList), http.MethodGet)
	rt.handle("/v1/operator/keyring/rotate", s.wrap(s.keyringRotate), http.MethodPut, http.MethodPost)
	rt.handle("/v1/operator/keyring/key/{id}", s.wrap(s.keyringDelete), http.MethodDelete)
	rt.handle("/.well-known/jwks.json", s.wrap(s.jwks), http.MethodGet)
}

// checkVariablePath refuses a /v1/var/ path with "." or ".." segments,
// which the router would otherwise redirect to another variable's path.
func checkVariablePath(req *http.Request) error {
	rest, ok := strings.CutPrefix(req.URL.Path, "/v1/var/")
	if !ok {
		return nil
	}
	for _, seg := range strings.Split(rest, "/") {
		if seg == "." || seg == ".." {
			return structs.Invalid("variable path %q contains %q: a path names a variable, not a file; remove the dots", rest, seg)
		}
	}
	return nil
}

// withStatus is an endpoint's answer with a status other than 200: a
// variable's CAS conflict (409, with the variable as it is) or a deleted
// variable (204, no body).
type withStatus struct {
	code int
	body any
}

// statusEndpoint is an endpoint that may answer a *withStatus.
type statusEndpoint func(w http.ResponseWriter, req *http.Request) (any, error)

// wrapStatus is wrap for endpoints that may answer a *withStatus.
func (s *Server) wrapStatus(e statusEndpoint) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		start := time.Now()
		req.Body = http.MaxBytesReader(w, req.Body, maxBodyBytes)
		out, err := e(w, req)
		if err != nil {
			s.logger.Debug("http request failed", "method", req.Method, "path", req.URL.Path,
				"code", statusCode(err), "error", err, "duration", time.Since(start))
			writeError(w, req, err)
			return
		}
		s.logger.Debug("http request", "method", req.Method, "path", req.URL.Path, "duration", time.Since(start))
		ws, ok := out.(*withStatus)
		if !ok {
			writeJSON(w, req, out)
			return
		}
		if ws.body == nil {
			w.WriteHeader(ws.code)
			return
		}
		b, err := json.Marshal(ws.body)
		if err != nil {
			writeError(w, req, fmt.Errorf("encode response: %w", err))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(ws.code)
		_, _ = w.Write(b)
	})
}

// varList is GET /v1/vars[?prefix=&namespace=&per_page=&next_token=]:
// []VariableMetadata in path order; X-Nomad-NextToken names the next page.
func (s *Server) varList(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	q := req.URL.Query()
	if q.Get("filter") != "" {
		return nil, structs.Invalid("filter expressions are not supported by drover yet: list with prefix= instead")
	}
	perPage := 0
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, structs.Invalid("per_page %q is invalid: use a positive number", v)
		}
		perPage = n
	}
	resp, err := rpcapi.VarList.Call(req.Context(), s.rpc, &structs.VariablesListRequest{
		PerPage: perPage, NextToken: q.Get("next_token"), QueryOptions: opts,
	})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	if resp.NextToken != "" {
		w.Header().Set("X-Nomad-NextToken", resp.NextToken)
	}
	out := make([]*api.VariableMetadata, 0, len(resp.Data))
	for _, m := range resp.Data {
		out = append(out, apiVariableMetadata(m))
	}
	return out, nil
}

// varRead is GET /v1/var/:path: the Variable, or 404 "variable not found".
// It is a blocking query on the variable (index, wait).
func (s *Server) varRead(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.VarGet.Call(req.Context(), s.rpc, &structs.VariablesReadRequest{Path: req.PathValue("path"), QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	if resp.Data == nil {
		return nil, structs.NewError(structs.KindNotFound, "variable not found")
	}
	return apiVariable(resp.Data), nil
}

// varWrite is PUT|POST /v1/var/:path[?cas=N]: the body is a Variable (its
// Items at least); the answer the variable written, or 409 with the
// variable as it is when the CAS did not apply. With ?lock-acquire,
// ?lock-renew or ?lock-release it takes (answering the variable with its
// Lock), renews or releases (both answering its metadata) the variable's
// lock, whose ID the body's Lock carries; a lock held by another is a 409.
// A locked variable is written only with its lock's ID in the body.
func (s *Server) varWrite(w http.ResponseWriter, req *http.Request) (any, error) {
	var body api.Variable
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	path := req.PathValue("path")
	if p := strings.Trim(body.Path, "/"); p != "" && p != path {
		return nil, structs.Invalid("variable path %q in the body does not match %q in the URL", body.Path, path)
	}
	op, check, err := casParam(req, structs.VarOpSet, structs.VarOpCAS)
	if err != nil {
		return nil, err
	}
	q := req.URL.Query()
	for _, lockOp := range []string{structs.VarOpLockAcquire, structs.VarOpLockRenew, structs.VarOpLockRelease} {
		if _, ok := q[lockOp]; !ok {
			continue
		}
		if op != structs.VarOpSet {
			return nil, structs.Invalid("%s and %s cannot be combined: send one operation", lockOp, op)
		}
		op = lockOp
	}
	in := &structs.VariableDecrypted{
		VariableMetadata: structs.VariableMetadata{Namespace: writeNamespace(req, body.Namespace), Path: path},
		Items:            body.Items,
	}
	if body.Lock != nil {
		in.Lock = &structs.VariableLock{ID: body.Lock.ID, TTL: body.Lock.TTL, LockDelay: body.Lock.LockDelay}
	}
	resp, err := rpcapi.VarApply.Call(req.Context(), s.rpc, &structs.VariablesApplyRequest{Op: op, Var: in, CheckIndex: check})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	if resp.Conflicted {
		return &withStatus{code: http.StatusConflict, body: apiVariable(resp.Conflict)}, nil
	}
	return apiVariable(resp.Output), nil
}

// varDelete is DELETE /v1/var/:path[?cas=N]: 204, or 409 with the
// variable as it is when the CAS did not apply.
func (s *Server) varDelete(w http.ResponseWriter, req *http.Request) (any, error) {
	op, check, err := casParam(req, structs.VarOpDelete, structs.VarOpDeleteCAS)
	if err != nil {
		return nil, err
	}
	in := &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Namespace: writeNamespace(req, ""), Path: req.PathValue("path")}}
	resp, err := rpcapi.VarApply.Call(req.Context(), s.rpc, &structs.VariablesApplyRequest{Op: op, Var: in, CheckIndex: check})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	if resp.Conflicted {
		return &withStatus{code: http.StatusConflict, body: apiVariable(resp.Conflict)}, nil
	}
	return &withStatus{code: http.StatusNoContent}, nil
}

// casParam returns op, or casOp with the index of ?cas=N.
func casParam(req *http.Request, op, casOp string) (string, uint64, error) {
	v, ok := req.URL.Query()["cas"]
	if !ok {
		return op, 0, nil
	}
	if len(v) == 0 || v[0] == "" {
		return "", 0, structs.Invalid("cas needs the ModifyIndex to check: cas=N (0: only if the variable does not exist)")
	}
	n, err := strconv.ParseUint(v[0], 10, 64)
	if err != nil {
		return "", 0, structs.Invalid("cas=%q is invalid: use the variable's ModifyIndex, a non-negative integer", v[0])
	}
	return casOp, n, nil
}

// writeNamespace is the namespace of a variable write: ?namespace=, else
// the body's, else "" (the default namespace).
func writeNamespace(req *http.Request, body string) string {
	return firstNonEmpty(req.URL.Query().Get("namespace"), body)
}

func apiVariableMetadata(m *structs.VariableMetadata) *api.VariableMetadata {
	return &api.VariableMetadata{
		Namespace: m.Namespace, Path: m.Path, CreateIndex: m.CreateIndex, ModifyIndex: m.ModifyIndex,
		CreateTime: m.CreateTime, ModifyTime: m.ModifyTime, Lock: apiVariableLock(m.Lock),
	}
}

func apiVariable(v *structs.VariableDecrypted) *api.Variable {
	if v == nil {
		return nil
	}
	return &api.Variable{
		Namespace: v.Namespace, Path: v.Path, CreateIndex: v.CreateIndex, ModifyIndex: v.ModifyIndex,
		CreateTime: v.CreateTime, ModifyTime: v.ModifyTime, Items: v.Items, Lock: apiVariableLock(v.Lock),
	}
}

func apiVariableLock(l *structs.VariableLock) *api.VariableLock {
	if l == nil {
		return nil
	}
	return &api.VariableLock{ID: l.ID, TTL: l.TTL, LockDelay: l.LockDelay}
}

// keyringList is GET /v1/operator/keyring/keys: []RootKeyMeta, oldest
// first.
func (s *Server) keyringList(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.KeyringList.Call(req.Context(), s.rpc, &structs.KeyringListRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	out := make([]*api.RootKeyMeta, 0, len(resp.Keys))
	for _, k := range resp.Keys {
		out = append(out, apiRootKey(k))
	}
	return out, nil
}

// keyringRotate is PUT|POST /v1/operator/keyring/rotate[?algo=&full=]:
// {"Index": N, "Key": RootKeyMeta}, the key's own indexes 0 as in Nomad's
// answer (N is the index the listed key was created at).
func (s *Server) keyringRotate(w http.ResponseWriter, req *http.Request) (any, error) {
	full, err := boolParam(req, "full")
	if err != nil {
		return nil, err
	}
	if v := req.URL.Query().Get("publish_time"); v != "" && v != "0" {
		return nil, structs.Invalid("publish_time is not supported by drover: a new key is published at once")
	}
	resp, err := rpcapi.KeyringRotate.Call(req.Context(), s.rpc, &structs.KeyringRotateRequest{
		Algorithm: req.URL.Query().Get("algo"), Full: full,
	})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return &struct {
		Index uint64
		Key   *api.RootKeyMeta
	}{Index: resp.Index, Key: apiRootKey(resp.Key)}, nil
}

// keyringDelete is DELETE /v1/operator/keyring/key/:id[?force=true]:
// {"Index": N}, as Nomad.
func (s *Server) keyringDelete(w http.ResponseWriter, req *http.Request) (any, error) {
	force, err := boolParam(req, "force")
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.KeyringDelete.Call(req.Context(), s.rpc, &structs.KeyringDeleteRequest{KeyID: req.PathValue("id"), Force: force})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return &struct{ Index uint64 }{Index: resp.Index}, nil
}

// jwk is one key of a JSON Web Key Set (RFC 7517; OKP keys: RFC 8037).
type jwk struct {
	KeyType string `json:"kty"`
	Curve   string `json:"crv"`
	X       string `json:"x"`
	KeyID   string `json:"kid"`
	Use     string `json:"use"`
	Alg     string `json:"alg"`
}

// jwks is GET /.well-known/jwks.json: {"keys": [...]}, the public keys
// that verify the workload identities the cluster signs.
func (s *Server) jwks(w http.ResponseWriter, req *http.Request) (any, error) {
	opts, err := queryOptions(req)
	if err != nil {
		return nil, err
	}
	resp, err := rpcapi.KeyringPublicKeys.Call(req.Context(), s.rpc, &structs.KeyringPublicKeysRequest{QueryOptions: opts})
	if err != nil {
		return nil, err
	}
	setQueryMeta(w, resp.QueryMeta)
	keys := make([]jwk, 0, len(resp.PublicKeys))
	for _, k := range resp.PublicKeys {
		keys = append(keys, jwk{KeyType: "OKP", Curve: "Ed25519", X: base64.RawURLEncoding.EncodeToString(k.PublicKey),
			KeyID: k.KeyID, Use: "sig", Alg: "EdDSA"})
	}
	return &struct {
		Keys []jwk `json:"keys"`
	}{Keys: keys}, nil
}

func apiRootKey(k *structs.RootKeyMeta) *api.RootKeyMeta {
	if k == nil {
		return nil
	}
	return &api.RootKeyMeta{
		KeyID: k.KeyID, Algorithm: k.Algorithm, CreateTime: k.CreateTime, CreateIndex: k.CreateIndex,
		ModifyIndex: k.ModifyIndex, State: k.State, PublishTime: k.PublishTime,
	}
}
