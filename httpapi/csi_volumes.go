package httpapi

import (
	"net/http"

	"github.com/drover-io/drover/structs"
)

// Drover runs no CSI plugins (docs/volumes.md), so no CSI volume can be
// registered: Nomad refuses a volume whose plugin no node runs. The CSI
// volume endpoints answer that truthfully for Nomad's clients and tools
// (the CLI's `volume status`, the web UI's storage page, the API module):
// the list is empty, a volume is not found, and registering one is
// refused with what to use instead.

// errNoCSI is the answer to a CSI volume write.
var errNoCSI = structs.Invalid("drover runs no CSI plugins, so it has no CSI volumes: use a host volume (client host_volume block, docs/volumes.md) or a docker volume instead")

// registerCSIVolumeRoutes adds Nomad's CSI volume endpoints.
func (s *Server) registerCSIVolumeRoutes(rt *router) {
	rt.handle("/v1/volumes", s.wrap(s.volumeList), http.MethodGet)
	rt.handle("/v1/volume/csi/{id}", s.wrap(s.csiVolumeGet), http.MethodGet)
	rt.handle("/v1/volume/csi/{id}", s.wrap(s.csiVolumeWrite), http.MethodPut, http.MethodPost, http.MethodDelete)
}

// volumeList is GET /v1/volumes?type=csi: the CSI volumes, none.
func (s *Server) volumeList(_ http.ResponseWriter, req *http.Request) (any, error) {
	switch t := req.URL.Query().Get("type"); t {
	case "csi":
		return []struct{}{}, nil
	case "host":
		return nil, structs.Invalid("drover has no dynamic host volumes: a node's host volumes are in its agent configuration, listed by `node status -verbose` (HostVolumes of /v1/node/:id)")
	case "":
		return nil, structs.Invalid("missing volume type: use ?type=csi")
	default:
		return nil, structs.Invalid("unknown volume type %q: use ?type=csi", t)
	}
}

// csiVolumeGet is GET /v1/volume/csi/:id: never found.
func (s *Server) csiVolumeGet(_ http.ResponseWriter, req *http.Request) (any, error) {
	return nil, structs.NotFound("CSI volume", req.PathValue("id"))
}

// csiVolumeWrite is PUT|POST|DELETE /v1/volume/csi/:id: refused.
func (s *Server) csiVolumeWrite(_ http.ResponseWriter, _ *http.Request) (any, error) {
	return nil, errNoCSI
}
