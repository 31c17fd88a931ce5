package docker

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/container"

	"github.com/drover-io/drover/plugins/drivers"
)

var _ drivers.ExecStreamingPlugin = (*Driver)(nil)

// eot is the terminal's end-of-file character (Ctrl-D).
const eot = 0x04

// ExecTaskStreaming runs opts.Command in the task's container through the
// Engine API's exec (create, then start with the connection hijacked for
// the command's stdio; resize for the terminal's sizes) and returns its
// exit code. Docker cannot kill an exec instance: when ctx ends the driver
// kills the command's process itself if the daemon is local (a unix
// socket), and otherwise only hangs up, which ends a command that reads
// its stdin or its terminal.
func (d *Driver) ExecTaskStreaming(ctx context.Context, taskID string, opts *drivers.ExecOptions) (*drivers.ExitResult, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	t, err := d.task(taskID)
	if err != nil {
		return nil, fmt.Errorf("exec task: %w", err)
	}
	if t.exited() {
		return nil, fmt.Errorf("exec task %q: its container has exited: start it again (alloc restart) before exec'ing into it", t.cfg.Name)
	}
	res, err := d.client.execStreaming(ctx, t.containerID, opts)
	if err != nil {
		return nil, fmt.Errorf("exec task %q: %w", t.cfg.Name, err)
	}
	return res, nil
}

// execStreaming runs opts in container id; see ExecTaskStreaming.
func (c *client) execStreaming(ctx context.Context, id string, opts *drivers.ExecOptions) (*drivers.ExitResult, error) {
	closeStdin := func() {
		if opts.Stdin != nil {
			opts.Stdin.Close()
		}
	}
	in := container.ExecCreateRequest{
		Cmd: opts.Command, Tty: opts.TTY,
		AttachStdin: opts.Stdin != nil, AttachStdout: true, AttachStderr: true,
	}
	if s := opts.InitialSize; opts.TTY && s != (drivers.TerminalSize{}) && c.speaks(ctx, consoleSizeAPIVersion) {
		in.ConsoleSize = &[2]uint{uint(s.Height), uint(s.Width)}
	}
	var created container.ExecCreateResponse
	if err := c.doJSON(ctx, http.MethodPost, "/containers/"+id+"/exec", nil, in, &created, true); err != nil {
		closeStdin()
		return nil, err
	}
	execID := created.ID
	body, err := json.Marshal(container.ExecStartRequest{Tty: opts.TTY})
	if err != nil {
		closeStdin()
		return nil, fmt.Errorf("encode exec start: %w", err)
	}
	conn, out, err := c.hijack(ctx, "/exec/"+execID+"/start", body)
	if err != nil {
		closeStdin()
		return nil, err
	}

	var wg sync.WaitGroup
	done := make(chan struct{})
	// Closing the connection and the caller's stdin ends the copies in
	// both directions; closing done the resize loop.
	killed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(killed)
		c.killExec(execID)
		conn.Close()
	})
	defer func() {
		if !stop() {
			<-killed
		}
		close(done)
		conn.Close()
		closeStdin()
		wg.Wait()
	}()

	if opts.TTY {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.resizeLoop(ctx, execID, opts, done)
		}()
	}
	if opts.Stdin != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := io.Copy(conn, opts.Stdin); err != nil {
				return // the command or the caller is gone
			}
			// The end of the input: on a terminal typed as Ctrl-D (the
			// daemon hangs up a terminal whose input is closed), else
			// the command's stdin is closed.
			if opts.TTY {
				_, _ = conn.Write([]byte{eot})
				return
			}
			if cw, ok := conn.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
			}
		}()
	}

	stdout, stderr := orDiscard(opts.Stdout), orDiscard(opts.Stderr)
	if opts.TTY {
		_, err = io.Copy(stdout, out)
	} else {
		err = readFrames(out, func(kind byte, p []byte) error {
			w := stdout
			if kind == streamStderr {
				w = stderr
			}
			_, err := w.Write(p)
			return err
		})
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return nil, fmt.Errorf("copy the command's output: %w", err)
	}
	// The output ends when the command exits; the daemon records the exit
	// code a moment later.
	for {
		running, code, err := c.inspectExec(ctx, execID)
		if err != nil {
			return nil, err
		}
		if !running {
			return &drivers.ExitResult{ExitCode: code}, nil
		}
		if !sleepCtx(ctx, execPollInterval) {
			return nil, ctx.Err()
		}
	}
}

// orDiscard returns w, or io.Discard for nil.
func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// consoleSizeAPIVersion is the first API version whose exec create takes
// the terminal's initial size.
const consoleSizeAPIVersion = "1.42"

// resizeRetry is how often a terminal size the daemon refused (the
// command has not started yet) is tried again.
const resizeRetry = 50 * time.Millisecond

// speaks reports whether the negotiated API version is at least v.
func (c *client) speaks(ctx context.Context, v string) bool {
	ver, err := c.apiVersion(ctx)
	return err == nil && compareVersions(ver, v) >= 0
}

// resizeLoop applies the terminal's sizes to the exec instance until done
// is closed: the initial size when the daemon could not take it at
// creation, then each new one. The daemon refuses a size until the command
// has started, which it does only after the stream is attached: a refused
// size is tried again every resizeRetry until a newer one replaces it.
func (c *client) resizeLoop(ctx context.Context, execID string, opts *drivers.ExecOptions, done <-chan struct{}) {
	var pending *drivers.TerminalSize
	if s := opts.InitialSize; s != (drivers.TerminalSize{}) && !c.speaks(ctx, consoleSizeAPIVersion) {
		pending = &s
	}
	retry := time.NewTicker(resizeRetry)
	defer retry.Stop()
	sizes := opts.Resize
	for {
		if pending != nil && c.resizeExec(ctx, execID, *pending) == nil {
			pending = nil
		}
		var tick <-chan time.Time
		if pending != nil {
			tick = retry.C
		}
		select {
		case <-done:
			return
		case <-tick:
		case size, ok := <-sizes:
			if !ok {
				sizes = nil
				continue
			}
			if size.Validate() == nil {
				pending = &size
			}
		}
	}
}

// resizeExec sets the terminal size of a running exec instance.
func (c *client) resizeExec(ctx context.Context, execID string, size drivers.TerminalSize) error {
	q := url.Values{"h": {strconv.Itoa(size.Height)}, "w": {strconv.Itoa(size.Width)}}
	return c.doJSON(ctx, http.MethodPost, "/exec/"+execID+"/resize", q, nil, nil, true)
}

// killExec kills an exec instance's process when the daemon runs on this
// host (a unix socket): the Engine API has no call for it.
func (c *client) killExec(execID string) {
	if !strings.HasPrefix(c.endpoint, "unix://") {
		return
	}
	var out container.ExecInspectResponse
	if err := c.doJSON(context.Background(), http.MethodGet, "/exec/"+execID+"/json", nil, nil, &out, true); err != nil {
		return
	}
	if out.Running && out.Pid > 0 {
		_ = syscall.Kill(out.Pid, syscall.SIGKILL)
	}
}

// hijack POSTs body to path and takes over the connection once the daemon
// switches protocols: the returned conn carries the caller's input (and
// can be half-closed), the reader the daemon's output (with what the
// response's reader buffered).
func (c *client) hijack(ctx context.Context, path string, body []byte) (net.Conn, io.Reader, error) {
	ver, err := c.apiVersion(ctx)
	if err != nil {
		return nil, nil, err
	}
	u, err := url.Parse(c.base + "/v" + ver + path)
	if err != nil {
		return nil, nil, fmt.Errorf("docker: build request: %w", err)
	}
	conn, err := c.dial(ctx, u.Host)
	if err != nil {
		return nil, nil, fmt.Errorf("docker: POST %s: %w", path, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("docker: build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "tcp")
	// The request and its answer are bounded by ctx; the stream after
	// them is not.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("docker: POST %s: %w", path, err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("docker: POST %s: %w", path, err)
	}
	switch resp.StatusCode {
	case http.StatusSwitchingProtocols, http.StatusOK:
		return conn, br, nil
	}
	defer conn.Close()
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var msg struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &msg) != nil || msg.Message == "" {
		msg.Message = strings.TrimSpace(string(b))
	}
	return nil, nil, &apiError{Status: resp.StatusCode, Message: msg.Message}
}

// dial connects to the daemon as the client's transport does, with TLS
// when it has a TLS config.
func (c *client) dial(ctx context.Context, addr string) (net.Conn, error) {
	dial := c.tr.DialContext
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	conn, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if c.tr.TLSClientConfig == nil {
		return conn, nil
	}
	cfg := c.tr.TLSClientConfig.Clone()
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg.ServerName = host
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	return tc, nil
}
