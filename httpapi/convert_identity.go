package httpapi

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/drover-io/drover/structs"
)

// apiIdentity is Nomad's WorkloadIdentity as its API sends it (api.Task
// carries it as raw JSON).
type apiIdentity struct {
	Name         string
	Audience     []string
	ChangeMode   string
	ChangeSignal string
	Env          bool
	File         bool
	Filepath     string
	ServiceName  string
	TTL          int64 // nanoseconds
	ExtraClaims  map[string]string
}

// identities converts a task's identity blocks: the unnamed one (raw, a
// JSON object) and the named ones (named, a JSON array).
func (c *converter) identities(where string, raw, named json.RawMessage) (*structs.TaskIdentity, []*structs.TaskIdentity) {
	var def *structs.TaskIdentity
	if !isUnsetJSON(raw) {
		var in apiIdentity
		if err := decodeStrict(raw, &in); err != nil {
			c.errorf("%s: identity block: %v", where, err)
			return nil, nil
		}
		def = c.identity(where, &in)
	}
	if isUnsetJSON(named) {
		return def, nil
	}
	var list []*apiIdentity
	if err := decodeStrict(named, &list); err != nil {
		c.errorf("%s: identity blocks: %v", where, err)
		return def, nil
	}
	var out []*structs.TaskIdentity
	for i, in := range list {
		if in == nil || in.Name == "" {
			c.errorf("%s: named identity %d has no name: give it one", where, i+1)
			continue
		}
		out = append(out, c.identity(where, in))
	}
	return def, out
}

func (c *converter) identity(where string, in *apiIdentity) *structs.TaskIdentity {
	if in.ServiceName != "" || len(in.ExtraClaims) > 0 || in.ChangeMode != "" && in.ChangeMode != "noop" {
		c.warnings = append(c.warnings, where+": identity "+in.Name+": service_name, extra_claims and change_mode are not supported by drover yet and were ignored")
	}
	out := &structs.TaskIdentity{
		Name: in.Name, Audience: in.Audience, Env: in.Env, File: in.File, Filepath: in.Filepath,
		TTL: time.Duration(in.TTL),
	}
	if out.Name == structs.DefaultIdentityName {
		out.Name = ""
	}
	return out
}

// decodeStrict decodes raw into v, refusing fields v does not have.
func decodeStrict(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
