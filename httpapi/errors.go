package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/drover-io/drover/structs"
)

// httpError is an error that carries its own HTTP status: a transport
// problem (unknown route, body too large) rather than a domain one.
type httpError struct {
	code int
	msg  string
}

func newHTTPError(code int, format string, args ...any) *httpError {
	return &httpError{code: code, msg: fmt.Sprintf(format, args...)}
}

// Error returns the message.
func (e *httpError) Error() string { return e.msg }

// statusCode maps an error to its HTTP status. It is the one place where
// error kinds become status codes.
func statusCode(err error) int {
	var he *httpError
	if errors.As(err, &he) {
		return he.code
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return http.StatusRequestEntityTooLarge
	}
	return structs.KindOf(err).HTTPStatus()
}

// writeError writes err as Nomad does: the status code and the message as a
// plain-text body.
func writeError(w http.ResponseWriter, _ *http.Request, err error) {
	code := statusCode(err)
	msg := err.Error()
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		msg = fmt.Sprintf("request body is larger than the limit of %d bytes", mbe.Limit)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg)
}
