package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ErrVariableNotFound is returned by Variables.Read when there is no
// variable at the path.
var ErrVariableNotFound = errors.New("variable not found")

// Variable is a Nomad variable: items (secret key/value pairs) at a path
// in a namespace. The servers keep the items encrypted.
type Variable struct {
	Namespace   string
	Path        string
	CreateIndex uint64
	ModifyIndex uint64
	// CreateTime and ModifyTime are Unix nanoseconds.
	CreateTime int64
	ModifyTime int64
	Items      map[string]string
	Lock       *VariableLock `json:",omitempty"`
}

// VariableMetadata is a variable without its items, as lists show it.
type VariableMetadata struct {
	Namespace   string
	Path        string
	CreateIndex uint64
	ModifyIndex uint64
	CreateTime  int64
	ModifyTime  int64
	Lock        *VariableLock `json:",omitempty"`
}

// VariableLock is a lock held on a variable.
type VariableLock struct {
	ID        string
	TTL       string
	LockDelay string
}

// CASConflictError is returned by a check-and-set write or delete that
// did not apply: Conflict is the variable as it is (only its namespace
// and path when it does not exist).
type CASConflictError struct {
	CheckIndex uint64
	Conflict   *Variable
}

// Error implements error.
func (e *CASConflictError) Error() string {
	return fmt.Sprintf("cas conflict: expected ModifyIndex %d; found %d", e.CheckIndex, e.Conflict.ModifyIndex)
}

// Variables reads and writes variables.
type Variables struct{ c *Client }

// Variables returns the variables endpoints.
func (c *Client) Variables() *Variables { return &Variables{c: c} }

// List lists the metadata of variables, in path order; q.Prefix filters
// by path prefix and q.Namespace "*" lists every namespace. perPage > 0
// asks for a page; the next page's token is returned ("" after the last).
func (v *Variables) List(q *QueryOptions, perPage int, nextToken string) ([]*VariableMetadata, string, *QueryMeta, error) {
	endpoint := "/v1/vars"
	params := url.Values{}
	if perPage > 0 {
		params.Set("per_page", strconv.Itoa(perPage))
	}
	if nextToken != "" {
		params.Set("next_token", nextToken)
	}
	if len(params) > 0 {
		endpoint += "?" + params.Encode()
	}
	var out []*VariableMetadata
	start := time.Now()
	resp, err := v.c.do(http.MethodGet, endpoint, v.c.queryParams(q), nil, &out)
	if err != nil {
		return nil, "", nil, err
	}
	qm := parseQueryMeta(resp.Header)
	qm.RequestTime = time.Since(start)
	return out, resp.Header.Get("X-Nomad-NextToken"), qm, nil
}

// Read returns the variable at path; ErrVariableNotFound when there is
// none.
func (v *Variables) Read(path string, q *QueryOptions) (*Variable, *QueryMeta, error) {
	var out Variable
	qm, err := v.c.query(variableEndpoint(path, ""), &out, q)
	if IsNotFound(err) {
		return nil, nil, ErrVariableNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Put writes the variable (its Namespace, the client's when empty, and
// Path). With cas, only if its ModifyIndex on the server is checkIndex
// (0: only if it does not exist); a conflict is a *CASConflictError.
func (v *Variables) Put(in *Variable, cas bool, checkIndex uint64, w *WriteOptions) (*Variable, *WriteMeta, error) {
	query := ""
	if cas {
		query = "cas=" + strconv.FormatUint(checkIndex, 10)
	}
	var out Variable
	wm, err := v.send(http.MethodPut, variableEndpoint(in.Path, query), in, &out, checkIndex, namespaceOf(in.Namespace, w))
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// Delete deletes the variable at path. With cas, only if its ModifyIndex
// on the server is checkIndex; a conflict is a *CASConflictError.
func (v *Variables) Delete(path string, cas bool, checkIndex uint64, w *WriteOptions) (*WriteMeta, error) {
	query := ""
	if cas {
		query = "cas=" + strconv.FormatUint(checkIndex, 10)
	}
	return v.send(http.MethodDelete, variableEndpoint(path, query), nil, nil, checkIndex, w)
}

func namespaceOf(ns string, w *WriteOptions) *WriteOptions {
	if w != nil && w.Namespace != "" || ns == "" {
		return w
	}
	return &WriteOptions{Namespace: ns}
}

// variableEndpoint returns /v1/var/<path>, each segment escaped, dots
// included: a ".." in a path reaches the agent, which refuses it, instead
// of being resolved away here.
func variableEndpoint(path, query string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(url.PathEscape(s), ".", "%2E")
	}
	e := "/v1/var/" + strings.Join(segs, "/")
	if query != "" {
		e += "?" + query
	}
	return e
}

// send is a variable write: 200 with the variable, 204 for a delete, 409
// with the conflicting variable.
func (v *Variables) send(method, endpoint string, in, out any, checkIndex uint64, w *WriteOptions) (*WriteMeta, error) {
	start := time.Now()
	u, err := v.c.base.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("build URL for %s: %w", endpoint, err)
	}
	merged := u.Query()
	for k, vs := range v.c.writeParams(w) {
		for _, s := range vs {
			merged.Add(k, s)
		}
	}
	u.RawQuery = merged.Encode()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("encode variable: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(v.c.ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("build request %s %s: %w", method, endpoint, err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if v.c.secretID != "" {
		req.Header.Set("X-Nomad-Token", v.c.secretID)
	}
	resp, err := v.c.http.Do(req)
	if err != nil {
		return nil, &ConnectError{Address: v.c.base.String(), Err: err}
	}
	defer resp.Body.Close()
	wm := &WriteMeta{RequestTime: time.Since(start)}
	wm.LastIndex, _ = strconv.ParseUint(resp.Header.Get("X-Nomad-Index"), 10, 64)
	switch resp.StatusCode {
	case http.StatusOK:
		if out != nil {
			if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
				return nil, fmt.Errorf("decode response of %s %s: %w", method, u.Path, err)
			}
		}
		return wm, nil
	case http.StatusNoContent:
		return wm, nil
	case http.StatusConflict:
		conflict := &Variable{}
		if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(conflict); err != nil {
			return nil, fmt.Errorf("decode the conflict of %s %s: %w", method, u.Path, err)
		}
		return nil, &CASConflictError{CheckIndex: checkIndex, Conflict: conflict}
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return nil, &UnexpectedResponseError{Method: method, Path: u.Path, StatusCode: resp.StatusCode, Message: strings.TrimSpace(string(msg))}
}

// RootKeyMeta describes a root key of the keyring.
type RootKeyMeta struct {
	KeyID       string
	Algorithm   string
	CreateTime  int64
	CreateIndex uint64
	ModifyIndex uint64
	State       string
	PublishTime int64
}

// Keyring manages the root keys that encrypt variables.
type Keyring struct{ c *Client }

// Keyring returns the keyring endpoints.
func (o *Operator) Keyring() *Keyring { return &Keyring{c: o.c} }

// List lists the root keys, oldest first.
func (k *Keyring) List(q *QueryOptions) ([]*RootKeyMeta, *QueryMeta, error) {
	var out []*RootKeyMeta
	qm, err := k.c.query("/v1/operator/keyring/keys", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Rotate makes a new active root key; with full, every variable is
// encrypted again with it.
func (k *Keyring) Rotate(full bool, w *WriteOptions) (*RootKeyMeta, *WriteMeta, error) {
	endpoint := "/v1/operator/keyring/rotate"
	if full {
		endpoint += "?full=true"
	}
	var out struct{ Key *RootKeyMeta }
	wm, err := k.c.write(http.MethodPut, endpoint, nil, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return out.Key, wm, nil
}

// Delete removes an inactive root key; with force even when variables are
// still encrypted with it (they become unreadable).
func (k *Keyring) Delete(keyID string, force bool, w *WriteOptions) (*WriteMeta, error) {
	endpoint := "/v1/operator/keyring/key/" + url.PathEscape(keyID) + "?force=" + strconv.FormatBool(force)
	return k.c.write(http.MethodDelete, endpoint, nil, nil, w)
}
