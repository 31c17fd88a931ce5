package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"
)

// Log stream origins and types.
const (
	OriginStart     = "start"
	OriginEnd       = "end"
	FSLogNameStdout = "stdout"
	FSLogNameStderr = "stderr"
)

// AllocFileInfo is a file of an allocation directory.
type AllocFileInfo struct {
	Name        string
	IsDir       bool
	Size        int64
	FileMode    string
	ModTime     time.Time
	ContentType string
}

// StreamFrame is one frame of a log stream: Data read from File, which is
// Offset bytes long after it. A frame with no fields is a heartbeat.
type StreamFrame struct {
	Offset    int64  `json:",omitempty"`
	Data      []byte `json:",omitempty"`
	File      string `json:",omitempty"`
	FileEvent string `json:",omitempty"`
}

// IsHeartbeat reports whether the frame only keeps the connection alive.
func (f *StreamFrame) IsHeartbeat() bool {
	return len(f.Data) == 0 && f.File == "" && f.FileEvent == "" && f.Offset == 0
}

// AllocFS is the /v1/client/fs endpoints: an allocation's files and logs on
// the agent's client.
type AllocFS struct{ c *Client }

// AllocFS returns the /v1/client/fs endpoints.
func (c *Client) AllocFS() *AllocFS { return &AllocFS{c: c} }

func withParams(q *QueryOptions, kv ...string) *QueryOptions {
	out := QueryOptions{}
	if q != nil {
		out = *q
	}
	params := make(map[string]string, len(out.Params)+len(kv)/2)
	for k, v := range out.Params {
		params[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		params[kv[i]] = kv[i+1]
	}
	out.Params = params
	return &out
}

func fsPath(op string, alloc *Allocation) string {
	return "/v1/client/fs/" + op + "/" + url.PathEscape(alloc.ID)
}

// List lists a directory of the allocation ("/" is its root).
func (a *AllocFS) List(alloc *Allocation, path string, q *QueryOptions) ([]*AllocFileInfo, *QueryMeta, error) {
	var out []*AllocFileInfo
	qm, err := a.c.query(fsPath("ls", alloc), &out, withParams(q, "path", path))
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Stat describes one file or directory of the allocation.
func (a *AllocFS) Stat(alloc *Allocation, path string, q *QueryOptions) (*AllocFileInfo, *QueryMeta, error) {
	var out AllocFileInfo
	qm, err := a.c.query(fsPath("stat", alloc), &out, withParams(q, "path", path))
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Cat returns a file's contents; the caller closes the reader.
func (a *AllocFS) Cat(alloc *Allocation, path string, q *QueryOptions) (io.ReadCloser, error) {
	return a.c.stream(fsPath("cat", alloc), withParams(q, "path", path))
}

// ReadAt returns limit bytes of a file from offset (to its end when limit
// is 0); the caller closes the reader.
func (a *AllocFS) ReadAt(alloc *Allocation, path string, offset, limit int64, q *QueryOptions) (io.ReadCloser, error) {
	return a.c.stream(fsPath("readat", alloc), withParams(q, "path", path,
		"offset", strconv.FormatInt(offset, 10), "limit", strconv.FormatInt(limit, 10)))
}

// Logs streams a task's stdout or stderr (logType) from offset bytes after
// the start or before the end (origin) of its rotated files, and with
// follow keeps streaming what the task writes. Frames arrive on the first
// channel, which is closed at the end of the stream or when cancel is
// closed; an error arrives on the second. Heartbeats are dropped.
func (a *AllocFS) Logs(alloc *Allocation, follow bool, task, logType, origin string,
	offset int64, cancel <-chan struct{}, q *QueryOptions) (<-chan *StreamFrame, <-chan error) {
	body, err := a.c.stream(fsPath("logs", alloc), withParams(q,
		"follow", strconv.FormatBool(follow), "task", task, "type", logType,
		"origin", origin, "offset", strconv.FormatInt(offset, 10)))
	if err != nil {
		return failedFrames(err)
	}
	return decodeFrames(body, cancel, "log stream")
}

// failedFrames returns the channels of a stream that could not start: a
// closed channel of frames, not nil (callers range over frames and then
// read the error, and ranging over nil would block forever), and err.
func failedFrames(err error) (<-chan *StreamFrame, <-chan error) {
	errCh := make(chan error, 1)
	errCh <- err
	frames := make(chan *StreamFrame)
	close(frames)
	return frames, errCh
}

// decodeFrames reads StreamFrame JSON objects from body until it ends or
// cancel is closed, and closes body. Frames arrive on the first channel,
// which is closed at the end; an error other than the stream's end
// arrives on the second. Heartbeats are dropped.
func decodeFrames(body io.ReadCloser, cancel <-chan struct{}, what string) (<-chan *StreamFrame, <-chan error) {
	errCh := make(chan error, 1)
	frames := make(chan *StreamFrame, 16)
	done := make(chan struct{})
	// Closing the body on cancel ends a Decode waiting for data.
	go func() {
		select {
		case <-cancel:
			body.Close()
		case <-done:
		}
	}()
	go func() {
		defer close(done)
		defer close(frames)
		defer body.Close()
		dec := json.NewDecoder(body)
		for {
			var f StreamFrame
			if err := dec.Decode(&f); err != nil {
				select {
				case <-cancel:
				default:
					if !errors.Is(err, io.EOF) {
						errCh <- fmt.Errorf("read %s: %w", what, err)
					}
				}
				return
			}
			if f.IsHeartbeat() {
				continue
			}
			select {
			case frames <- &f:
			case <-cancel:
				return
			}
		}
	}()
	return frames, errCh
}
