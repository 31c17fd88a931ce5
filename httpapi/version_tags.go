package httpapi

import (
	"net/http"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// jobTagBody is the body of PUT /v1/job/:id/versions/:name/tag (Nomad's
// TagVersionRequest): the version to tag (the current one when absent)
// and the tag's description, at the top level or in Tag.
type jobTagBody struct {
	Version     *uint64
	Description string
	Tag         *struct {
		Name        string
		Description string
	}
	writeRequest
}

// jobTagApply is PUT|POST /v1/job/:id/versions/:name/tag.
func (s *Server) jobTagApply(w http.ResponseWriter, req *http.Request) (any, error) {
	var body jobTagBody
	if req.ContentLength != 0 {
		if err := decodeBody(req, &body); err != nil {
			return nil, err
		}
	}
	name, desc := req.PathValue("name"), body.Description
	if body.Tag != nil {
		if body.Tag.Name != "" && body.Tag.Name != name {
			return nil, structs.Invalid("tag name %q in the body does not match %q in the URL", body.Tag.Name, name)
		}
		if desc == "" {
			desc = body.Tag.Description
		}
	}
	resp, err := rpcapi.JobTagVersion.Call(req.Context(), s.rpc, &structs.JobTagRequest{
		Namespace: body.namespace(req), JobID: req.PathValue("id"), Name: name, Description: desc, Version: body.Version,
	})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return &struct{ Version uint64 }{resp.Version}, nil
}

// jobTagUnset is DELETE /v1/job/:id/versions/:name/tag.
func (s *Server) jobTagUnset(w http.ResponseWriter, req *http.Request) (any, error) {
	resp, err := rpcapi.JobTagVersion.Call(req.Context(), s.rpc, &structs.JobTagRequest{
		Namespace: namespaceParam(req), JobID: req.PathValue("id"), Name: req.PathValue("name"), Unset: true,
	})
	if err != nil {
		return nil, err
	}
	setIndex(w, resp.Index)
	return &struct{ Version uint64 }{resp.Version}, nil
}
