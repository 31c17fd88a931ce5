package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/serf/serf"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/server/keyring"
	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/tlsutil"
)

// The key-encryption key reaches a server that starts without one from a
// peer server (docs/decisions.md, "Cluster: a joining server receives the
// KEK from a peer"). A server without keyring.kek holds a provisional
// KEK (keyring.LoadKEK). While it does, runKEKFetch watches the
// replicated root keys; once one is wrapped with another KEK (the
// cluster's), it asks the other servers for that KEK with rpcapi.
// KEKHandoff and adopts the answer, which writes it to keyring.kek. Only
// a server gets an answer: where the RPC port is TLS, the caller's
// certificate must name server.<region>.nomad; where it is not, the
// request must prove the gossip key, and the answer is encrypted under a
// key derived from it and an ephemeral X25519 exchange (keyring,
// handoff.go). Without TLS or a gossip key nothing is handed over: the
// operator copies the file, as the log says.

// Bounds of the pause between hand-off attempts while no peer answers.
const (
	kekFetchRetryMin = time.Second
	kekFetchRetryMax = 30 * time.Second
)

// kekManualHint is what an operator does where no hand-off is possible.
const kekManualHint = "copy keyring.kek from the data_dir/server of a server that has it into this server's data_dir/server (mode 0600) and restart this server"

// tlsConnKey is the context key of the TLS connection a call arrived on.
type tlsConnKey struct{}

// connContext puts the TLS connection a call arrives on into its context
// (http.Server.ConnContext), for handlers that check the caller's
// certificate.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if pc, ok := c.(*peekedConn); ok {
		c = pc.Conn
	}
	if tc, ok := c.(*tls.Conn); ok {
		return context.WithValue(ctx, tlsConnKey{}, tc)
	}
	return ctx
}

// callerIsServer checks that the call arrived over TLS with a certificate
// that names this region's servers.
func (s *Server) callerIsServer(ctx context.Context) error {
	name := tlsutil.ServerName(s.config.Region)
	tc, _ := ctx.Value(tlsConnKey{}).(*tls.Conn)
	if tc == nil {
		return structs.NewError(structs.KindPermission, "refused: the RPC port is TLS and this call came without it; only a server with a certificate for %s may ask for the key-encryption key", name)
	}
	cs := tc.ConnectionState()
	if len(cs.PeerCertificates) == 0 || cs.PeerCertificates[0].VerifyHostname(name) != nil {
		return structs.NewError(structs.KindPermission, "refused: the caller's certificate does not name %s; only a server may ask for the key-encryption key", name)
	}
	return nil
}

// gossipSecrets returns the gossip keys of this server's pool, primary
// first; nil without gossip encryption.
func (s *Server) gossipSecrets() [][]byte {
	if s.cluster == nil || s.cluster.gossipKeys == nil {
		return nil
	}
	return s.cluster.gossipKeys.GetKeys()
}

// tlsOn reports whether the RPC port is mutual TLS.
func (s *Server) tlsOn() bool {
	return s.config.Cluster != nil && s.config.Cluster.TLS != nil
}

// KEKHandoff implements rpcapi.KEKHandoff: the cluster's KEK, encrypted to
// the server that asks, when it proves it is one.
func (s *Server) KEKHandoff(ctx context.Context, req *structs.KEKHandoffRequest) (*structs.KEKHandoffResponse, error) {
	secrets := s.gossipSecrets()
	switch {
	case s.cluster == nil:
		return nil, structs.Invalid("this server is not part of a cluster: it hands its key-encryption key to no one")
	case s.tlsOn():
		if err := s.callerIsServer(ctx); err != nil {
			s.logger.Warn("key-encryption key hand-off refused", "error", err)
			return nil, err
		}
	case len(secrets) == 0:
		err := structs.NewError(structs.KindPermission, "refused: the servers share no secret (no TLS on the RPC port, no gossip key in server.encrypt), "+
			"so the key-encryption key is not sent over the network; %s", kekManualHint)
		s.logger.Warn("key-encryption key hand-off refused", "error", err)
		return nil, err
	}
	resp, err := s.keyring.AnswerHandoff(req, secrets)
	if errors.Is(err, keyring.ErrHandoffAuth) {
		err = structs.NewError(structs.KindPermission, "refused: %v; only a server of this cluster may ask for the key-encryption key", err)
		s.logger.Warn("key-encryption key hand-off refused", "error", err)
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	s.logger.Info("handed the key-encryption key to a server", "kek_id", req.KEKID)
	return resp, nil
}

// foreignKEK returns the ID of the KEK that wraps the replicated root
// keys when it is not this server's ("" when they are this server's, or
// there are none), watching them in ws.
func (s *Server) foreignKEK(ws memdb.WatchSet) (string, error) {
	st := s.fsm.State()
	ws.Add(st.AbandonCh())
	keys, err := st.RootKeys(ws)
	if err != nil {
		return "", err
	}
	own := s.keyring.KEKID()
	for _, k := range keys {
		if k.KEKID != own {
			return k.KEKID, nil
		}
	}
	return "", nil
}

// runKEKFetch runs while the keyring's KEK is provisional: once the
// replicated root keys are wrapped with another KEK, it asks the other
// servers for it until one answers, then adopts it.
func (s *Server) runKEKFetch() {
	backoff := kekFetchRetryMin
	for s.keyring.Provisional() {
		ws := memdb.NewWatchSet()
		want, err := s.foreignKEK(ws)
		if err != nil {
			s.logger.Error("read the root keys", "error", err)
		}
		if want == "" {
			if ws.WatchCtx(s.ctx) != nil {
				return
			}
			continue
		}
		if !s.tlsOn() && len(s.gossipSecrets()) == 0 {
			s.logger.Error("this server has no key-encryption key and cannot ask another server for it: the servers share no secret "+
				"(no TLS on the RPC port, no gossip key in server.encrypt); "+kekManualHint, "kek_id", want)
			return
		}
		from, err := s.fetchKEK(want)
		if err == nil {
			s.logger.Info("received the cluster's key-encryption key from another server and wrote it to keyring.kek",
				"kek_id", want, "from", from)
			return
		}
		s.logger.Warn("ask the other servers for the key-encryption key", "kek_id", want, "error", err,
			"retry_in", backoff.String(), "otherwise", kekManualHint)
		if !s.sleep(backoff) {
			return
		}
		backoff = min(2*backoff, kekFetchRetryMax)
	}
}

// fetchKEK asks each other alive server of the region for the KEK want
// and adopts the first answer that opens; it returns who answered.
func (s *Server) fetchKEK(want string) (string, error) {
	var secret []byte
	if keys := s.gossipSecrets(); len(keys) > 0 {
		secret = keys[0]
	}
	var errs []error
	for _, m := range s.members() {
		if m.Name == s.config.NodeName || m.RPCAddr == "" || m.Status != serf.StatusAlive {
			continue
		}
		ask, err := keyring.NewHandoffAsk(want, secret)
		if err != nil {
			return "", err
		}
		ctx, cancel := context.WithTimeout(s.serverSecretContext(s.ctx, rpcapi.KEKHandoff.Info()), s.holdTimeout())
		resp, err := rpcapi.KEKHandoff.Call(ctx, serverConn{wire: s.cluster.wire, addr: m.RPCAddr}, ask.Request())
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("server %s: %w", m.Name, err))
			continue
		}
		kek, err := ask.Open(resp)
		if err != nil {
			errs = append(errs, fmt.Errorf("server %s's answer: %w", m.Name, err))
			continue
		}
		if err := s.keyring.Adopt(kek); err != nil {
			return "", err
		}
		return m.Name, nil
	}
	if len(errs) == 0 {
		return "", errors.New("no other server is alive")
	}
	return "", errors.Join(errs...)
}

// checkOwnKEK refuses to wrap a new root key with a provisional KEK while
// the replicated root keys are wrapped with another one (the cluster's,
// not received yet): the cluster would need two KEKs.
func (s *Server) checkOwnKEK() error {
	if !s.keyring.Provisional() {
		return nil
	}
	want, err := s.foreignKEK(memdb.NewWatchSet())
	if err != nil || want == "" {
		return err
	}
	return structs.NewError(structs.KindUnavailable, "server %s has not received the cluster's key-encryption key %s yet "+
		"(it asks the other servers for it; see its log): try again, or %s", s.config.NodeName, want, kekManualHint)
}
