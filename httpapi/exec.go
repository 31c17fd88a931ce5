package httpapi

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

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// Exec sessions never hold the agent up: every write to the caller has a
// deadline, the caller must answer pings (or send frames) in time, and a
// failure of either ends the session and kills the command.
const (
	// execMaxFrame bounds a frame from the caller (its stdin data is sent
	// in chunks far smaller).
	execMaxFrame = 1 << 20
	// execMaxCloseText is the most a close frame's reason can hold.
	execMaxCloseText = 123
)

// execTimeouts bound an exec session's waits on its caller.
type execTimeouts struct {
	// write bounds one write to the caller.
	write time.Duration
	// ping is how often the agent pings the caller.
	ping time.Duration
	// silence is how long the caller may stay silent (no frame, no
	// pong) before the session ends.
	silence time.Duration
}

func defaultExecTimeouts() execTimeouts {
	return execTimeouts{write: 10 * time.Second, ping: 15 * time.Second, silence: 45 * time.Second}
}

// AllocExecer is what the exec endpoint needs from the node client
// (*client.Client implements it).
type AllocExecer interface {
	// ExecAlloc runs an interactive command in a running task of an
	// allocation of this node; the driver owns opts.Stdin and closes it.
	ExecAlloc(ctx context.Context, allocID, task string, opts *drivers.ExecOptions) (*drivers.ExitResult, error)
}

// execUpgrader upgrades exec requests. Its default origin check refuses a
// browser page of another origin, so that no web page can drive a
// session with the user's access to the agent.
var execUpgrader = websocket.Upgrader{ReadBufferSize: 16 << 10, WriteBufferSize: 16 << 10}

// execRequest is a checked exec request.
type execRequest struct {
	task    string
	command []string
	tty     bool
	size    drivers.TerminalSize // the terminal's initial size; zero: none
}

// parseExecQuery reads ?task=&command=<JSON array>&tty=, and the
// terminal's initial size tty_height= and tty_width= (a drover
// extension). It checks only their form: which task runs the command
// depends on the allocation (selectTask).
func parseExecQuery(req *http.Request) (*execRequest, error) {
	q := req.URL.Query()
	out := &execRequest{task: q.Get("task")}
	raw := q.Get("command")
	if raw == "" {
		return nil, structs.Invalid(`exec: missing command: pass command as a JSON array, e.g. command=["/bin/sh"]`)
	}
	if err := json.Unmarshal([]byte(raw), &out.command); err != nil {
		return nil, structs.Invalid(`exec: command must be a JSON array of strings, e.g. ["/bin/sh","-c","date"]: %v`, err)
	}
	if len(out.command) == 0 || out.command[0] == "" {
		return nil, structs.Invalid("exec: empty command: name the program to run")
	}
	if v := q.Get("tty"); v != "" {
		tty, err := strconv.ParseBool(v)
		if err != nil {
			return nil, structs.Invalid("exec: tty=%q is not a boolean", v)
		}
		out.tty = tty
	}
	if h, w := q.Get("tty_height"), q.Get("tty_width"); h != "" || w != "" {
		hi, herr := strconv.Atoi(h)
		wi, werr := strconv.Atoi(w)
		out.size = drivers.TerminalSize{Height: hi, Width: wi}
		if herr != nil || werr != nil || out.size.Validate() != nil {
			return nil, structs.Invalid("exec: tty_height=%q and tty_width=%q must both be numbers between 1 and %d", h, w, drivers.MaxTerminalDimension)
		}
	}
	return out, nil
}

// selectTask checks the requested task against alloc; the task may be
// left out when the allocation's group has one task.
func (er *execRequest) selectTask(alloc *structs.Allocation) error {
	var tasks []string
	if alloc.Job != nil {
		if tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup); tg != nil {
			for _, t := range tg.Tasks {
				tasks = append(tasks, t.Name)
			}
		}
	}
	switch {
	case er.task == "" && len(tasks) == 1:
		er.task = tasks[0]
	case er.task == "":
		return structs.Invalid("exec: allocation %s has %d tasks (%s): name one with task=", alloc.ID, len(tasks), strings.Join(tasks, ", "))
	case !allocHasTask(alloc, er.task):
		return structs.NotFound("task", er.task)
	}
	return nil
}

// allocExec is GET /v1/client/allocation/:id/exec?task=&command=&tty=: an
// interactive command in a running task, over a WebSocket of
// api.ExecStreamingInput and api.ExecStreamingOutput frames. A malformed
// query is refused with an HTTP error before the upgrade; everything
// else that stops the command (an unknown allocation or task, a command
// that cannot run) ends the session with a close frame carrying the
// error (refuseExec), as Nomad's agent does.
func (s *Server) allocExec(w http.ResponseWriter, req *http.Request) {
	er, err := parseExecQuery(req)
	if err != nil {
		writeError(w, req, err)
		return
	}
	alloc, nc, err := s.localAlloc(req)
	if err != nil {
		s.refuseExec(w, req, unknownExecAlloc(req, err))
		return
	}
	if err := er.selectTask(alloc); err != nil {
		s.refuseExec(w, req, err)
		return
	}
	execer, ok := nc.(AllocExecer)
	if !ok {
		s.refuseExec(w, req, newHTTPError(http.StatusNotImplemented, "this agent's client cannot run alloc exec"))
		return
	}
	conn, err := execUpgrader.Upgrade(w, req, nil)
	if err != nil {
		return // the upgrader answered the caller
	}
	logger := s.logger.With("alloc_id", alloc.ID, "task", er.task)
	logger.Debug("exec session started", "command", er.command, "tty", er.tty)
	sess := newExecSession(req.Context(), conn, er.tty, s.execTimes)
	res, err := sess.run(func(ctx context.Context, opts *drivers.ExecOptions) (*drivers.ExitResult, error) {
		opts.Command = er.command
		if er.tty {
			opts.InitialSize = er.size
		}
		return execer.ExecAlloc(ctx, alloc.ID, er.task, opts)
	})
	switch {
	case err != nil:
		logger.Debug("exec session failed", "error", err)
	default:
		logger.Debug("exec session ended", "exit_code", res.ExitCode)
	}
}

// refuseExec answers an exec request that cannot start with err. A
// WebSocket request is upgraded and the session closed at once with the
// error (close code ExecCloseCodeBase plus its HTTP status, its text as
// the reason), as Nomad's agent does: Nomad's clients read an exec's
// errors only from the session. A request that asked for no upgrade gets
// the plain HTTP error.
func (s *Server) refuseExec(w http.ResponseWriter, req *http.Request, err error) {
	if !websocket.IsWebSocketUpgrade(req) {
		writeError(w, req, err)
		return
	}
	conn, uerr := execUpgrader.Upgrade(w, req, nil)
	if uerr != nil {
		return // the upgrader answered the caller
	}
	sess := newExecSession(req.Context(), conn, false, s.execTimes)
	sess.closeWith(err)
	sess.cancel(nil)
	_ = conn.Close()
}

// unknownExecAlloc turns a not-found answer to the lookup of an exec's
// allocation into Nomad's `Unknown allocation "ID"`, the text Nomad's
// clients match; other errors stay as they are.
func unknownExecAlloc(req *http.Request, err error) error {
	if structs.KindOf(err) != structs.KindNotFound {
		return err
	}
	return structs.NewError(structs.KindNotFound, "Unknown allocation %q", req.PathValue("id"))
}

// execSession is one exec WebSocket: it turns the caller's frames into the
// command's stdin and terminal sizes, and the command's output into frames.
type execSession struct {
	conn   *websocket.Conn
	tty    bool
	times  execTimeouts
	ctx    context.Context
	cancel context.CancelCauseFunc

	writeMu sync.Mutex // one writer at a time (pings are control frames)
}

func newExecSession(parent context.Context, conn *websocket.Conn, tty bool, times execTimeouts) *execSession {
	ctx, cancel := context.WithCancelCause(parent)
	return &execSession{conn: conn, tty: tty, times: times, ctx: ctx, cancel: cancel}
}

// run runs exec with the session's stdio and ends the session: the exit
// frame and a normal close, or a close frame with the error. Every
// goroutine it starts has ended when it returns.
func (e *execSession) run(exec func(context.Context, *drivers.ExecOptions) (*drivers.ExitResult, error)) (*drivers.ExitResult, error) {
	defer e.cancel(nil)
	stdinR, stdinW := io.Pipe()
	resize := make(chan drivers.TerminalSize)
	opts := &drivers.ExecOptions{
		TTY:   e.tty,
		Stdin: stdinR,
		Stdout: e.output(func(p []byte) *api.ExecStreamingOutput {
			return &api.ExecStreamingOutput{Stdout: &api.ExecStreamingIOOperation{Data: p}}
		}),
		Stderr: e.output(func(p []byte) *api.ExecStreamingOutput {
			return &api.ExecStreamingOutput{Stderr: &api.ExecStreamingIOOperation{Data: p}}
		}),
	}
	if e.tty {
		opts.Resize = resize
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		e.readInput(stdinW, resize)
		// A session that ended (the caller gone, a bad frame) kills the
		// command through its context. Closing its stdin too would
		// hand it a clean end of input, racing the kill: a `cat > file`
		// could exit 0 with a truncated file, and the session would
		// report success. Its stdin is closed once exec has returned.
		if e.ctx.Err() == nil {
			stdinW.Close()
		}
	}()
	go func() {
		defer wg.Done()
		e.ping()
	}()

	res, err := exec(e.ctx, opts)
	if err == nil {
		err = e.writeFrame(&api.ExecStreamingOutput{Exited: true, Result: &api.ExecStreamingExitResult{ExitCode: res.ExitCode}})
	}
	if err != nil {
		if cause := context.Cause(e.ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			err = cause // what ended the session (a bad frame, a gone caller)
		}
		e.closeWith(err)
	} else {
		e.closeNormally()
	}
	e.cancel(nil)
	e.conn.Close() // ends readInput's read
	stdinR.Close()
	wg.Wait()
	return res, err
}

// output returns the writer of one of the command's streams: each write is
// one frame. A failed write (a slow or gone caller) ends the session, which
// kills the command.
func (e *execSession) output(frame func([]byte) *api.ExecStreamingOutput) io.Writer {
	return writerFunc(func(p []byte) error {
		if err := e.writeFrame(frame(p)); err != nil {
			e.cancel(fmt.Errorf("exec: send output to the caller: %w", err))
			return err
		}
		return nil
	})
}

// writeFrame writes one frame within the write timeout.
func (e *execSession) writeFrame(f *api.ExecStreamingOutput) error {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	_ = e.conn.SetWriteDeadline(time.Now().Add(e.times.write))
	return e.conn.WriteJSON(f)
}

// readInput reads the caller's frames until the connection ends: stdin
// data and its end go to stdin, terminal sizes to resize. A bad frame ends
// the session with an error saying what is wrong; a caller silent for
// the silence timeout (no frame, no pong) ends it too.
func (e *execSession) readInput(stdin *io.PipeWriter, resize chan<- drivers.TerminalSize) {
	e.conn.SetReadLimit(execMaxFrame)
	extend := func() { _ = e.conn.SetReadDeadline(time.Now().Add(e.times.silence)) }
	e.conn.SetPongHandler(func(string) error { extend(); return nil })
	for {
		// From now: the time spent handing stdin to a command that reads
		// it slowly does not count as the caller's silence.
		extend()
		_, msg, err := e.conn.ReadMessage()
		if err != nil {
			if e.ctx.Err() == nil {
				e.cancel(fmt.Errorf("exec: the caller went away: %w", err))
			}
			return
		}
		var in api.ExecStreamingInput
		if err := json.Unmarshal(msg, &in); err != nil {
			e.cancel(structs.Invalid("exec: bad frame from the caller: %v", err))
			return
		}
		switch {
		case in.Stdin != nil:
			if len(in.Stdin.Data) > 0 {
				if _, err := stdin.Write(in.Stdin.Data); err != nil {
					continue // the command's stdin is closed: drop the input
				}
			}
			if in.Stdin.Close {
				stdin.Close()
			}
		case in.TTYSize != nil:
			size := drivers.TerminalSize{Height: in.TTYSize.Height, Width: in.TTYSize.Width}
			if err := size.Validate(); err != nil {
				e.cancel(structs.Invalid("exec: bad tty_size frame: %v", err))
				return
			}
			if !e.tty {
				continue // no terminal to size
			}
			select {
			case resize <- size:
			case <-e.ctx.Done():
				return
			}
		}
	}
}

// ping pings the caller every ping interval until the session ends; a
// ping that cannot be sent ends the session.
func (e *execSession) ping() {
	t := time.NewTicker(e.times.ping)
	defer t.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-t.C:
			if err := e.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(e.times.write)); err != nil {
				e.cancel(fmt.Errorf("exec: the caller went away: %w", err))
				return
			}
		}
	}
}

// closeNormally ends the session after the exit frame.
func (e *execSession) closeNormally() {
	_ = e.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(e.times.write))
}

// closeWith ends the session with err: close code ExecCloseCodeBase plus
// err's HTTP status, and err's text as the reason. A text too long for a
// close frame is sent first as stderr data.
func (e *execSession) closeWith(err error) {
	msg := err.Error()
	reason := msg
	if len(reason) > execMaxCloseText {
		_ = e.writeFrame(&api.ExecStreamingOutput{Stderr: &api.ExecStreamingIOOperation{Data: []byte(msg + "\n")}})
		reason = "exec failed: see the error above"
	}
	code := api.ExecCloseCodeBase + statusCode(err)
	_ = e.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(e.times.write))
}

// writerFunc is an io.Writer calling a function with each write.
type writerFunc func(p []byte) error

func (f writerFunc) Write(p []byte) (int, error) {
	if err := f(p); err != nil {
		return 0, err
	}
	return len(p), nil
}
