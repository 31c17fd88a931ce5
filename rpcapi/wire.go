package rpcapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strings"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/drover-io/drover/structs"
)

// The wire protocol, served on the agent's RPC port (4647).
const (
	// PathPrefix prefixes every method's path: POST /rpc/v1/<Method>.
	PathPrefix = "/rpc/v1/"
	// ContentType is the media type of request and response bodies.
	ContentType = "application/msgpack"
	// maxBodyBytes bounds a request body (an update of many allocations).
	maxBodyBytes = 64 << 20
	// maxErrorBytes bounds the error body a caller reads.
	maxErrorBytes = 1 << 20
	// forwardedHeader marks a call that a server forwards to the leader:
	// the server that receives it never forwards it again.
	forwardedHeader = "X-Drover-Forwarded-Rpc"
	// maxDecodeDepth bounds the nesting of a decoded body: as deep as the
	// server's raft entries may be (it refuses to store deeper values), so
	// that no body it accepts is refused here, and no body recurses the
	// decoder without bound.
	maxDecodeDepth = 2048
)

// ErrorBody is the body of a failed call.
type ErrorBody struct {
	// Kind is the structs.ErrorKind's String() ("not found", ...).
	Kind    string
	Message string
}

// NewCodec returns the msgpack handle of bodies: "codec" struct tags only,
// so that fields hidden from JSON (a node's SecretID) cross, and nesting
// bounded.
func NewCodec() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.MaxDepth = maxDecodeDepth
	h.TypeInfos = codec.NewTypeInfos([]string{"codec"})
	h.MapType = reflect.TypeOf(map[string]any(nil))
	h.RawToString = true
	h.Canonical = true
	return h
}

// NewHTTPHandler returns the handler of POST /rpc/v1/<Method> for the
// methods h serves. The call's context is the HTTP request's, so that a
// caller that goes away cancels a blocking query.
func NewHTTPHandler(h *Handlers, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &httpHandler{h: h, logger: logger, mh: NewCodec()}
}

type httpHandler struct {
	h      *Handlers
	logger *slog.Logger
	mh     *codec.MsgpackHandle
}

// ServeHTTP serves one call.
func (s *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, PathPrefix)
	if !ok {
		s.writeError(w, structs.NewError(structs.KindNotFound, "no such RPC: %s", r.URL.Path))
		return
	}
	m, err := s.h.lookup(name)
	if err != nil {
		s.writeError(w, err)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		s.writeErrorCode(w, http.StatusMethodNotAllowed, structs.Invalid("RPC %s takes POST, not %s", name, r.Method))
		return
	}
	body := http.MaxBytesReader(w, r.Body, maxBodyBytes)
	req := m.info.NewRequest()
	if err := codec.NewDecoder(body, s.mh).Decode(req); err != nil {
		s.writeError(w, structs.Invalid("decode %s request: %v", name, err))
		return
	}
	// Reach the body's end: only then does net/http watch the connection,
	// cancelling the context when the caller goes away.
	if _, err := io.Copy(io.Discard, body); err != nil {
		s.writeError(w, structs.Invalid("read %s request: %v", name, err))
		return
	}
	ctx := withRemote(r.Context())
	if tok := r.Header.Get(TokenHeader); tok != "" {
		ctx = WithAuthToken(ctx, tok)
	}
	if r.Header.Get(forwardedHeader) != "" {
		ctx = WithForwarded(ctx)
	}
	resp, err := s.h.call(ctx, m, req)
	if err != nil {
		s.logger.Debug("RPC failed", "method", name, "error", err)
		s.writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", ContentType)
	if err := codec.NewEncoder(w, s.mh).Encode(resp); err != nil {
		s.logger.Warn("write RPC response", "method", name, "error", err)
	}
}

func (s *httpHandler) writeError(w http.ResponseWriter, err error) {
	s.writeErrorCode(w, errorStatus(err), err)
}

func (s *httpHandler) writeErrorCode(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", ContentType)
	w.WriteHeader(code)
	body := &ErrorBody{Kind: structs.KindOf(err).String(), Message: err.Error()}
	if err := codec.NewEncoder(w, s.mh).Encode(body); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		s.logger.Debug("write RPC error", "error", err)
	}
}

// errorStatus maps an error's kind to the response status; a call the
// server gave up on (its context ended) is unavailable.
func errorStatus(err error) int {
	if k := structs.KindOf(err); k != structs.KindInternal {
		return k.HTTPStatus()
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// forwardedKey is the context key of WithForwarded.
type forwardedKey struct{}

// WithForwarded returns ctx marking a call as forwarded by a server to the
// leader: a Transport sends the mark, and the receiving server's handler
// finds it in its context (Forwarded), so that a call is forwarded once
// at most, never back and forth between servers that disagree on who
// leads.
func WithForwarded(ctx context.Context) context.Context {
	return context.WithValue(ctx, forwardedKey{}, true)
}

// Forwarded reports whether ctx marks a forwarded call (WithForwarded).
func Forwarded(ctx context.Context) bool {
	v, _ := ctx.Value(forwardedKey{}).(bool)
	return v
}

// TransportError is a failure to get a drover server's answer: the server
// was unreachable, the connection broke, or something else answered (a
// proxy). Sent says whether the request may have reached the server.
type TransportError struct {
	Err  error
	Sent bool
}

// Error returns the cause.
func (e *TransportError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *TransportError) Unwrap() error { return e.Err }

// Transport makes single attempts of calls to one server over HTTP: the
// caller's half of the wire. rpcclient adds failover and retries.
type Transport struct {
	hc *http.Client
	mh *codec.MsgpackHandle
}

// NewTransport returns a Transport that sends with hc.
func NewTransport(hc *http.Client) *Transport { return &Transport{hc: hc, mh: NewCodec()} }

// Encode returns the body of a call of m with req.
func (t *Transport) Encode(m *Info, req any) ([]byte, error) {
	var buf bytes.Buffer
	if err := codec.NewEncoder(&buf, t.mh).Encode(req); err != nil {
		return nil, fmt.Errorf("rpc %s: encode request: %w", m.name, err)
	}
	return buf.Bytes(), nil
}

// Post sends body (from Encode) to the server at addr ("10.0.0.1:4647") as
// a call of m and returns its reply, or the server's error with its kind
// (a *structs.KindError), or a *TransportError.
func (t *Transport) Post(ctx context.Context, addr string, m *Info, body []byte) (any, error) {
	url := "http://" + addr + PathPrefix + m.name
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("rpc %s: %w", m.name, err)
	}
	hreq.Header.Set("Content-Type", ContentType)
	hreq.Header.Set("Accept", ContentType)
	if Forwarded(ctx) {
		hreq.Header.Set(forwardedHeader, "1")
	}
	if tok := AuthToken(ctx); tok != "" {
		hreq.Header.Set(TokenHeader, tok)
	}
	resp, err := t.hc.Do(hreq)
	if err != nil {
		return nil, &TransportError{Err: fmt.Errorf("rpc %s to %s: %w", m.name, addr, err), Sent: !isDialError(err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		out := m.newResp()
		if err := codec.NewDecoder(resp.Body, t.mh).Decode(out); err != nil {
			return nil, &TransportError{Err: fmt.Errorf("rpc %s to %s: decode response: %w", m.name, addr, err), Sent: true}
		}
		return out, nil
	}
	return nil, t.decodeError(resp, m.name, addr)
}

// isDialError reports whether err happened while connecting: the request
// was not sent.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// decodeError turns a non-200 answer into an error of the server's kind.
func (t *Transport) decodeError(resp *http.Response, method, addr string) error {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	if err != nil {
		return &TransportError{Err: fmt.Errorf("rpc %s to %s: read error response: %w", method, addr, err), Sent: true}
	}
	var eb ErrorBody
	if resp.Header.Get("Content-Type") != ContentType || codec.NewDecoderBytes(raw, t.mh).Decode(&eb) != nil || eb.Kind == "" {
		// Not an answer from a drover server (a proxy, an older agent).
		msg := strings.TrimSpace(string(raw))
		if len(msg) > 200 {
			msg = msg[:200]
		}
		return &TransportError{Err: fmt.Errorf("rpc %s to %s: HTTP %d: %s", method, addr, resp.StatusCode, msg), Sent: true}
	}
	return &structs.KindError{Kind: parseKind(eb.Kind), Msg: eb.Message}
}

// MayRetry reports whether a call of m that failed with err may be sent
// again, to the same server or another: when it never reached a server,
// or when the server may not have applied it (unreachable, unavailable)
// and m is safe to repeat (its Class). A deduplicated write is safe only
// with its request ID set (Info.WithRequestID).
func MayRetry(m *Info, err error) bool {
	var te *TransportError
	switch {
	case errors.As(err, &te):
		return !te.Sent || m.Class().SafeToRepeat()
	case structs.KindOf(err) == structs.KindUnavailable:
		return m.Class().SafeToRepeat()
	}
	return false
}

// parseKind maps an ErrorKind's name back to the kind.
func parseKind(name string) structs.ErrorKind {
	for _, k := range []structs.ErrorKind{structs.KindInvalid, structs.KindNotFound, structs.KindConflict, structs.KindUnavailable, structs.KindPermission} {
		if k.String() == name {
			return k
		}
	}
	return structs.KindInternal
}
