package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// The frames of an exec session (GET /v1/client/allocation/:id/exec, a
// WebSocket), in Nomad's JSON shapes. Each WebSocket text message is one
// frame; byte data is base64 in JSON.
//
// The caller sends ExecStreamingInput frames: stdin data, the end of stdin
// ({"stdin":{"close":true}}), terminal sizes ({"tty_size":{"height":h,
// "width":w}}) and empty frames as heartbeats. The agent sends
// ExecStreamingOutput frames: stdout and stderr data, then one
// {"exited":true,"result":{"exit_code":N}} and a normal close. When the
// command cannot run, the agent closes the connection with a code of
// ExecCloseCodeBase plus the HTTP status of the error and the error's
// text as the close reason (a long message comes first as stderr data).

// ExecCloseCodeBase plus an HTTP status is the WebSocket close code of an
// exec session that failed (4404: the task is gone, 4409: it is not
// running, 4400: a bad request, 4500: any other failure).
const ExecCloseCodeBase = 4000

// ExecHeartbeatInterval is how often an exec client sends an empty frame.
const ExecHeartbeatInterval = 10 * time.Second

// ExecStreamingIOOperation is data of one stream, or its end.
type ExecStreamingIOOperation struct {
	Data  []byte `json:"data,omitempty"`
	Close bool   `json:"close,omitempty"`
}

// TerminalSize is a terminal's size in rows and columns.
type TerminalSize struct {
	Height int `json:"height,omitempty"`
	Width  int `json:"width,omitempty"`
}

// ExecStreamingInput is a frame from the caller; at most one field is set,
// none in a heartbeat.
type ExecStreamingInput struct {
	Stdin   *ExecStreamingIOOperation `json:"stdin,omitempty"`
	TTYSize *TerminalSize             `json:"tty_size,omitempty"`
}

// ExecStreamingExitResult is the command's exit.
type ExecStreamingExitResult struct {
	ExitCode int `json:"exit_code"`
}

// ExecStreamingOutput is a frame from the agent: output, or the exit.
type ExecStreamingOutput struct {
	Stdout *ExecStreamingIOOperation `json:"stdout,omitempty"`
	Stderr *ExecStreamingIOOperation `json:"stderr,omitempty"`
	Exited bool                      `json:"exited,omitempty"`
	Result *ExecStreamingExitResult  `json:"result,omitempty"`
}

// ExecRequest is an interactive command to run in a task of an allocation.
type ExecRequest struct {
	// Task is the task to run it in.
	Task string
	// Command is the program and its arguments.
	Command []string
	// TTY runs the command on a terminal (stdout and stderr together).
	TTY bool
	// Stdin is sent to the command until EOF, which closes its input;
	// nil sends nothing and leaves the input open. When it is an
	// io.Closer, Exec closes it as the session ends, so that a pending
	// Read returns (a Reader that cannot be closed holds Exec up until its
	// Read returns).
	Stdin io.Reader
	// Stdout and Stderr receive the output (nil discards it).
	Stdout, Stderr io.Writer
	// Size is the terminal's size when the command starts (TTY only; the
	// zero value: none, the agent's default), sent as the tty_height and
	// tty_width parameters (a drover extension: a command that asks for
	// its size at once gets the right one, which a first tty_size frame
	// may reach too late).
	Size TerminalSize
	// Resize carries the terminal's later sizes (TTY only; nil: none).
	Resize <-chan TerminalSize
}

// Exec runs req in the allocation's task through the agent, which forwards
// the session to the agent of the node that runs it, and returns the
// command's exit code once it has exited. Cancelling ctx ends the session,
// which kills the command.
func (a *Allocations) Exec(ctx context.Context, allocID string, req *ExecRequest, q *QueryOptions) (int, error) {
	cmd, err := json.Marshal(req.Command)
	if err != nil {
		return 0, fmt.Errorf("encode command: %w", err)
	}
	kv := []string{"task", req.Task, "command", string(cmd), "tty", strconv.FormatBool(req.TTY)}
	if req.TTY && req.Size != (TerminalSize{}) {
		kv = append(kv, "tty_height", strconv.Itoa(req.Size.Height), "tty_width", strconv.Itoa(req.Size.Width))
	}
	q = withParams(q, kv...)
	conn, err := a.c.websocket(ctx, "/v1/client/allocation/"+allocID+"/exec", q)
	if err != nil {
		return 0, err
	}
	s := &execSession{conn: conn, req: req}
	return s.run(ctx)
}

// execSession is one exec's WebSocket and the goroutines that feed it.
type execSession struct {
	conn *websocket.Conn
	req  *ExecRequest

	writeMu sync.Mutex // one writer at a time, as the connection requires
}

func (s *execSession) send(in *ExecStreamingInput) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	return s.conn.WriteJSON(in)
}

// run streams the session until the exit frame, an error or ctx's end.
func (s *execSession) run(ctx context.Context) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		s.conn.Close()
		if c, ok := s.req.Stdin.(io.Closer); ok {
			c.Close()
		}
		wg.Wait()
	}()
	// Closing the connection ends the reading below when ctx ends.
	stop := context.AfterFunc(ctx, func() { s.conn.Close() })
	defer stop()

	if s.req.Stdin != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.sendStdin()
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.sendControl(ctx)
	}()

	stdout, stderr := s.req.Stdout, s.req.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	for {
		var out ExecStreamingOutput
		if err := s.conn.ReadJSON(&out); err != nil {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				if ce.Code >= ExecCloseCodeBase && ce.Text != "" {
					return 0, &UnexpectedResponseError{Method: http.MethodGet, Path: "exec", StatusCode: ce.Code - ExecCloseCodeBase, Message: ce.Text}
				}
				return 0, fmt.Errorf("exec session closed before the command's exit: %w", err)
			}
			return 0, fmt.Errorf("exec session: %w", err)
		}
		switch {
		case out.Stdout != nil && len(out.Stdout.Data) > 0:
			if _, err := stdout.Write(out.Stdout.Data); err != nil {
				return 0, fmt.Errorf("write output: %w", err)
			}
		case out.Stderr != nil && len(out.Stderr.Data) > 0:
			if _, err := stderr.Write(out.Stderr.Data); err != nil {
				return 0, fmt.Errorf("write output: %w", err)
			}
		case out.Exited && out.Result != nil:
			s.writeMu.Lock()
			_ = s.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
			s.writeMu.Unlock()
			return out.Result.ExitCode, nil
		}
	}
}

// sendStdin sends the caller's stdin, then its end.
func (s *execSession) sendStdin() {
	buf := make([]byte, 16<<10)
	for {
		n, err := s.req.Stdin.Read(buf)
		if n > 0 {
			if s.send(&ExecStreamingInput{Stdin: &ExecStreamingIOOperation{Data: buf[:n]}}) != nil {
				return
			}
		}
		if errors.Is(err, io.EOF) {
			_ = s.send(&ExecStreamingInput{Stdin: &ExecStreamingIOOperation{Close: true}})
			return
		}
		if err != nil {
			return
		}
	}
}

// sendControl sends terminal sizes and heartbeats until ctx ends.
func (s *execSession) sendControl(ctx context.Context) {
	heartbeat := time.NewTicker(ExecHeartbeatInterval)
	defer heartbeat.Stop()
	resize := s.req.Resize
	for {
		select {
		case <-ctx.Done():
			return
		case size, ok := <-resize:
			if !ok {
				resize = nil
				continue
			}
			if s.send(&ExecStreamingInput{TTYSize: &size}) != nil {
				return
			}
		case <-heartbeat.C:
			if s.send(&ExecStreamingInput{}) != nil {
				return
			}
		}
	}
}

// websocket opens a WebSocket to endpoint with the query options. A
// refused upgrade is an *UnexpectedResponseError with the agent's message.
func (c *Client) websocket(ctx context.Context, endpoint string, q *QueryOptions) (*websocket.Conn, error) {
	u, err := c.base.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("build URL for %s: %w", endpoint, err)
	}
	merged := u.Query()
	for k, vs := range c.queryParams(q) {
		for _, v := range vs {
			merged.Add(k, v)
		}
	}
	u.RawQuery = merged.Encode()
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	dialer := websocket.Dialer{HandshakeTimeout: 30 * time.Second}
	if t, ok := c.http.Transport.(*http.Transport); ok {
		dialer.NetDialContext = t.DialContext
		dialer.TLSClientConfig = t.TLSClientConfig
		dialer.Proxy = t.Proxy
	} else if c.http.Transport == nil {
		dialer.Proxy = http.ProxyFromEnvironment
	}
	h := http.Header{}
	if c.secretID != "" {
		h.Set("X-Nomad-Token", c.secretID)
	}
	conn, resp, err := dialer.DialContext(ctx, u.String(), h)
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			defer resp.Body.Close()
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			return nil, &UnexpectedResponseError{Method: http.MethodGet, Path: u.Path, StatusCode: resp.StatusCode, Message: strings.TrimSpace(string(msg))}
		}
		return nil, &ConnectError{Address: c.base.String(), Err: err}
	}
	return conn, nil
}
