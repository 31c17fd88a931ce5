package httpapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// The /v1/client endpoints act on the allocations of one node, so they are
// served by that node's agent. An agent that gets one for an allocation
// (or a ?node_id) of another node looks the node up on the servers and
// proxies the request to the node's HTTP address, streaming the answer
// (logs that follow, snapshots) and keeping its status. The proxied
// request carries forwardedHeader, and an agent never forwards a request
// that carries it: a request crosses at most one hop, whatever the
// servers say about where an allocation runs.
const (
	// forwardedHeader marks a request proxied by another agent; its value
	// names that agent (its node ID, or "server").
	forwardedHeader = "X-Drover-Forwarded-By"
	// forwardDialTimeout bounds connecting to another node's agent, so
	// that an unreachable node is reported quickly.
	forwardDialTimeout = 5 * time.Second
)

// nodeForwarder proxies client requests to other nodes' agents.
type nodeForwarder struct {
	transport *http.Transport
	scheme    string // https when the agents serve TLS
	logger    *slog.Logger
}

func newNodeForwarder(logger *slog.Logger, tlsConfig *tls.Config) *nodeForwarder {
	dialer := &net.Dialer{Timeout: forwardDialTimeout, KeepAlive: 30 * time.Second}
	f := &nodeForwarder{
		transport: &http.Transport{
			Proxy:               nil, // cluster traffic never goes through a proxy
			DialContext:         dialer.DialContext,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     90 * time.Second,
			TLSClientConfig:     tlsConfig,
		},
		scheme: "http",
		logger: logger,
	}
	if tlsConfig != nil {
		f.scheme = "https"
	}
	return f
}

// close releases idle connections to other agents.
func (f *nodeForwarder) close() { f.transport.CloseIdleConnections() }

// resolvedAllocKey holds, in a request's context, the allocation the
// forwarding step resolved, so that the endpoint need not ask again.
type resolvedAllocKey struct{}

// forwardClientRequests wraps the handler of a /v1/client route: a request
// for another node goes to that node's agent; every other request (and
// every request another agent forwarded) is served here.
func (s *Server) forwardClientRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get(forwardedHeader) != "" {
			next.ServeHTTP(w, req)
			return
		}
		alloc, node, err := s.clientTarget(req)
		if err != nil {
			if websocket.IsWebSocketUpgrade(req) {
				// Only alloc exec is a WebSocket: its errors end the
				// session (exec.go).
				s.refuseExec(w, req, unknownExecAlloc(req, err))
				return
			}
			writeError(w, req, err)
			return
		}
		if node == nil {
			if alloc != nil {
				req = req.WithContext(context.WithValue(req.Context(), resolvedAllocKey{}, alloc))
			}
			next.ServeHTTP(w, req)
			return
		}
		s.forwardToNode(w, req, node)
	})
}

// clientTarget returns the allocation a client request names (nil when it
// names none) and the node to forward it to (nil: serve it here), with one
// server call.
func (s *Server) clientTarget(req *http.Request) (*structs.Allocation, *structs.Node, error) {
	nc := s.client
	local := ""
	if nc != nil {
		local = nc.NodeID()
	}
	allocID, nodeID := clientRequestTarget(req)
	var (
		alloc *structs.Allocation
		node  *structs.Node
	)
	switch {
	case allocID != "" && nc != nil && hasAllocDir(nc, allocID):
		// A full ID of an allocation this node runs (as another node's
		// client sends for a snapshot): no need to ask the servers.
		return nil, nil, nil
	case allocID != "":
		resp, err := rpcapi.AllocNode.Call(req.Context(), s.rpc, &structs.AllocSpecificRequest{
			AllocID:      allocID,
			QueryOptions: structs.QueryOptions{Namespace: namespaceParam(req), Region: req.URL.Query().Get("region")},
		})
		if err != nil {
			return nil, nil, err
		}
		alloc = resp.Alloc
		if alloc.NodeID == "" || alloc.NodeID == local {
			return alloc, nil, nil
		}
		if resp.Node == nil {
			return nil, nil, newHTTPError(http.StatusBadGateway,
				"allocation %s runs on node %s, which the servers no longer know", alloc.ID, shortNodeID(alloc.NodeID))
		}
		node = resp.Node
	case nodeID != "":
		node, err := s.remoteNode(req, nodeID)
		return nil, node, err
	default:
		return nil, nil, nil
	}
	if node.ID == local {
		return alloc, nil, nil
	}
	if node.HTTPAddr == "" {
		return nil, nil, noHTTPAddrError(node)
	}
	return alloc, node, nil
}

// remoteNode returns the node of ID (or unique prefix) nodeID to forward
// req to; nil when it is this agent's own node.
func (s *Server) remoteNode(req *http.Request, nodeID string) (*structs.Node, error) {
	local := s.localNodeID()
	if local != "" && strings.HasPrefix(local, nodeID) {
		return nil, nil
	}
	resp, err := rpcapi.NodeGet.Call(req.Context(), s.rpc, &structs.NodeSpecificRequest{
		NodeID: nodeID, QueryOptions: structs.QueryOptions{Region: req.URL.Query().Get("region")},
	})
	if err != nil {
		return nil, err
	}
	if resp.Node == nil {
		return nil, structs.NotFound("node", nodeID)
	}
	if resp.Node.ID == local {
		return nil, nil
	}
	if resp.Node.HTTPAddr == "" {
		return nil, noHTTPAddrError(resp.Node)
	}
	return resp.Node, nil
}

// noHTTPAddrError says that a request for node cannot be forwarded.
func noHTTPAddrError(node *structs.Node) error {
	return newHTTPError(http.StatusBadGateway,
		"node %s (%s) has no HTTP address to forward the request to", shortNodeID(node.ID), node.Name)
}

// clientRequestTarget returns what a /v1/client request acts on: an
// allocation (the {id} of /v1/client/allocation/{id}/...,
// /v1/client/fs/<op>/{id}), or a node (?node_id= of /v1/client/gc,
// /v1/client/stats, ...).
func clientRequestTarget(req *http.Request) (allocID, nodeID string) {
	if id := req.PathValue("id"); id != "" {
		return id, ""
	}
	return "", req.URL.Query().Get("node_id")
}

// localNodeID returns the ID of this agent's node, "" without a client.
func (s *Server) localNodeID() string {
	if nc := s.client; nc != nil {
		return nc.NodeID()
	}
	return ""
}

// hasAllocDir reports whether the client has a directory for the
// allocation of that exact ID.
func hasAllocDir(nc NodeClient, allocID string) bool {
	_, err := nc.AllocDir(allocID)
	return err == nil
}

// forwardToNode proxies req to node's agent and copies its answer back as
// it arrives. A node that cannot be reached is a 502 (a 504 when it did
// not answer in time) naming the node.
func (s *Server) forwardToNode(w http.ResponseWriter, req *http.Request, node *structs.Node) {
	by := s.localNodeID()
	if by == "" {
		by = "server"
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = s.forwarder.scheme
			pr.Out.URL.Host = node.HTTPAddr
			pr.Out.Host = node.HTTPAddr
			pr.Out.Header.Set(forwardedHeader, by)
		},
		Transport:     s.forwarder.transport,
		FlushInterval: -1, // stream: logs that follow must arrive as written
		ErrorLog:      slog.NewLogLogger(s.logger.Handler(), slog.LevelDebug),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			s.logger.Debug("forward client request failed", "node_id", node.ID, "addr", node.HTTPAddr, "path", r.URL.Path, "error", err)
			writeError(w, r, unreachableNodeError(node, err))
		},
	}
	s.logger.Debug("forwarding client request", "node_id", node.ID, "addr", node.HTTPAddr, "path", req.URL.Path)
	rp.ServeHTTP(w, req)
}

// unreachableNodeError describes a failure to get an answer from node's
// agent.
func unreachableNodeError(node *structs.Node, err error) error {
	what := fmt.Sprintf("node %s (%s, status %s) at %s", shortNodeID(node.ID), node.Name, node.Status, node.HTTPAddr)
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return newHTTPError(http.StatusGatewayTimeout, "%s did not answer in time: %v", what, err)
	}
	return newHTTPError(http.StatusBadGateway,
		"%s is unreachable: %v (the node's own agent serves this request: is it running, and reachable from this agent?)", what, err)
}
