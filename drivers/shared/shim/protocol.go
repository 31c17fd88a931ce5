package shim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"
)

// The socket protocol: a client connects, writes one JSON request line,
// reads one JSON response line, and closes. Closing the connection early
// abandons the request (a wait or stop stops waiting; a stop in progress
// goes on). Both sides carry the protocol version; a mismatch is an error.
const protocolVersion = 1

// Request operations.
const (
	opStatus = "status"
	opSignal = "signal"
	opStop   = "stop"
	opStats  = "stats"
	opWait   = "wait"
)

type request struct {
	V  int    `json:"v"`
	Op string `json:"op"`
	// Signal is a signal number (signal and stop).
	Signal int `json:"signal,omitempty"`
	// Timeout is how long stop waits before SIGKILL.
	Timeout time.Duration `json:"timeout,omitempty"`
}

type response struct {
	V      int         `json:"v"`
	Error  string      `json:"error,omitempty"`
	Status *Status     `json:"status,omitempty"`
	Exit   *ExitStatus `json:"exit,omitempty"`
	Usage  *Usage      `json:"usage,omitempty"`
}

// unreachableError means the shim did not answer: it is not listening, or
// it closed the connection without a response (it died).
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return "shim unreachable: " + e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

// call sends req to the shim at socket and returns its response. Errors are
// ctx's error, an *unreachableError, or the shim's answer.
func call(ctx context.Context, socket string, req request) (*response, error) {
	req.V = protocolVersion
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &unreachableError{err}
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	var resp response
	err = json.NewEncoder(conn).Encode(req)
	if err == nil {
		err = json.NewDecoder(conn).Decode(&resp)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &unreachableError{err}
	}
	if resp.V != protocolVersion {
		return nil, fmt.Errorf("shim speaks protocol version %d, this drover speaks %d", resp.V, protocolVersion)
	}
	if resp.Error != "" {
		return nil, errors.New(resp.Error)
	}
	return &resp, nil
}
