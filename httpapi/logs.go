package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/drivers/shared/logrotate"
	"github.com/drover-io/drover/structs"
)

// Log streaming settings.
const (
	// logPollInterval is how often a followed log is checked for new data.
	logPollInterval = 100 * time.Millisecond
	// logHeartbeatInterval is how often an idle followed JSON stream sends
	// an empty frame, so that a dead connection is noticed.
	logHeartbeatInterval = 10 * time.Second
	// logFrameSize bounds the data of one frame.
	logFrameSize = 64 << 10
)

// streamFrame is one frame of a JSON log stream, as Nomad's StreamFrame:
// Data (base64 in JSON) read from File, which is Offset bytes long after
// it. A frame with no fields is a heartbeat.
type streamFrame struct {
	Offset    int64  `json:",omitempty"`
	Data      []byte `json:",omitempty"`
	File      string `json:",omitempty"`
	FileEvent string `json:",omitempty"`
}

// fsLogs is GET /v1/client/fs/logs/:alloc?task=&type=&follow=&offset=&origin=&plain=:
// a task's stdout or stderr across its rotated files, as JSON frames or,
// with plain=true, as raw bytes. With follow it streams until the client
// disconnects, moving to the next rotated file when one appears.
func (s *Server) fsLogs(w http.ResponseWriter, req *http.Request) {
	ls, origin, offset, plain, err := s.logRequest(req)
	if err != nil {
		writeError(w, req, err)
		return
	}
	idx, off, err := ls.startAt(origin, offset)
	if err != nil {
		writeError(w, req, err)
		return
	}
	rc := http.NewResponseController(w)
	var emit func(streamFrame) error
	if plain {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		emit = func(f streamFrame) error {
			if len(f.Data) == 0 {
				return nil // no heartbeats in plain text
			}
			if _, err := w.Write(f.Data); err != nil {
				return err
			}
			return flush(rc)
		}
	} else {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		emit = func(f streamFrame) error {
			if err := enc.Encode(f); err != nil {
				return err
			}
			return flush(rc)
		}
	}
	w.WriteHeader(http.StatusOK)
	_ = flush(rc)
	if err := ls.stream(req.Context(), idx, off, emit); err != nil && req.Context().Err() == nil {
		s.logger.Debug("log stream ended", "path", req.URL.Path, "error", err)
	}
}

func flush(rc *http.ResponseController) error {
	if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// logRequest validates a logs request and returns its stream.
func (s *Server) logRequest(req *http.Request) (ls *logStream, origin string, offset int64, plain bool, err error) {
	q := req.URL.Query()
	typ := q.Get("type")
	switch typ {
	case "":
		typ = "stdout"
	case "stdout", "stderr":
	default:
		return nil, "", 0, false, structs.Invalid("type=%q is invalid: want stdout or stderr", typ)
	}
	origin = q.Get("origin")
	switch origin {
	case "":
		origin = "start"
	case "start", "end":
	default:
		return nil, "", 0, false, structs.Invalid("origin=%q is invalid: want start or end", origin)
	}
	if offset, err = int64Param(req, "offset"); err != nil {
		return nil, "", 0, false, err
	}
	follow, err := boolParam(req, "follow")
	if err != nil {
		return nil, "", 0, false, err
	}
	if plain, err = boolParam(req, "plain"); err != nil {
		return nil, "", 0, false, err
	}
	alloc, nc, err := s.localAlloc(req)
	if err != nil {
		return nil, "", 0, false, err
	}
	task, err := logTask(alloc, q.Get("task"))
	if err != nil {
		return nil, "", 0, false, err
	}
	root, err := nc.AllocDir(alloc.ID)
	if err != nil {
		return nil, "", 0, false, err
	}
	ls = &logStream{
		dir:       filepath.Join(root, allocdir.SharedAllocName, allocdir.LogDirName),
		relDir:    allocdir.SharedAllocName + "/" + allocdir.LogDirName,
		base:      task + "." + typ,
		follow:    follow,
		poll:      logPollInterval,
		heartbeat: logHeartbeatInterval,
	}
	return ls, origin, offset, plain, nil
}

// logTask returns the task whose logs are asked for: the one named, or the
// group's only task.
func logTask(alloc *structs.Allocation, task string) (string, error) {
	names := allocTaskNames(alloc)
	if task == "" {
		if len(names) == 1 {
			return names[0], nil
		}
		return "", structs.Invalid("allocation %s has %d tasks (%s): name one with ?task=",
			alloc.ID, len(names), strings.Join(names, ", "))
	}
	if strings.ContainsAny(task, `/\`) || task == "." || task == ".." {
		return "", structs.Invalid("task=%q is not a task name", task)
	}
	if names != nil && !allocHasTask(alloc, task) {
		return "", structs.NotFound("task", task)
	}
	return task, nil
}

// logStream reads the rotated files "<dir>/<base>.<n>" of one log in
// order, as if they were one file.
type logStream struct {
	dir    string // <alloc>/alloc/logs
	relDir string // "alloc/logs": frames name files relative to the alloc dir
	base   string // "<task>.stdout"
	follow bool
	// poll is how often a followed log is checked for new data;
	// heartbeat how often an idle stream sends an empty frame.
	poll      time.Duration
	heartbeat time.Duration
}

// logFile is one rotated file of a log.
type logFile struct {
	index int
	size  int64
}

// files lists the log's files, oldest first, with their sizes.
func (ls *logStream) files() ([]logFile, error) {
	paths, err := logrotate.Files(ls.dir, ls.base)
	if err != nil {
		return nil, err
	}
	out := make([]logFile, 0, len(paths))
	for _, p := range paths {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(p), ls.base+"."))
		if err != nil {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil {
			continue // purged since it was listed
		}
		out = append(out, logFile{index: n, size: fi.Size()})
	}
	return out, nil
}

// startAt returns the file index and offset in it where a read starts:
// offset bytes after the start of the oldest file, or before the end of the
// newest (origin "end"), counted across all files and clamped to them.
func (ls *logStream) startAt(origin string, offset int64) (int, int64, error) {
	files, err := ls.files()
	if err != nil {
		return 0, 0, err
	}
	if len(files) == 0 {
		return 0, 0, nil
	}
	var total int64
	for _, f := range files {
		total += f.size
	}
	pos := offset
	if origin == "end" {
		pos = max(total-offset, 0)
	}
	for _, f := range files {
		if pos < f.size {
			return f.index, pos, nil
		}
		pos -= f.size
	}
	last := files[len(files)-1]
	return last.index, last.size, nil
}

// nextIndex returns the smallest index of an existing file above cur.
func (ls *logStream) nextIndex(cur int) (int, bool, error) {
	files, err := ls.files()
	if err != nil {
		return 0, false, err
	}
	for _, f := range files {
		if f.index > cur {
			return f.index, true, nil
		}
	}
	return 0, false, nil
}

func (ls *logStream) path(idx int) string {
	return filepath.Join(ls.dir, ls.base+"."+strconv.Itoa(idx))
}

// stream emits the log from file idx at offset off: to the end of the
// newest file, or, when following, until ctx ends. A file is left for the
// next once a newer file exists and it has been read to its end again, so
// that nothing written before the rotation is lost.
func (ls *logStream) stream(ctx context.Context, idx int, off int64, emit func(streamFrame) error) error {
	buf := make([]byte, logFrameSize)
	lastSent := time.Now()
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if f == nil {
			// Never through a link, never blocking on a FIFO.
			opened, err := logrotate.Open(ls.path(idx))
			switch {
			case err == nil:
				if _, err := opened.Seek(off, io.SeekStart); err != nil {
					opened.Close()
					return fmt.Errorf("seek log file: %w", err)
				}
				f = opened
			case errors.Is(err, fs.ErrNotExist):
				// Not written yet, or purged by rotation: go on with the
				// next file if there is one.
				next, ok, err := ls.nextIndex(idx)
				if err != nil {
					return err
				}
				if ok {
					idx, off = next, 0
					continue
				}
				if !ls.follow {
					return nil
				}
				if err := ls.wait(ctx, &lastSent, emit); err != nil {
					return err
				}
				continue
			default:
				return fmt.Errorf("open log file: %w", err)
			}
		}
		n, err := f.Read(buf)
		if n > 0 {
			off += int64(n)
			if err := emit(streamFrame{File: ls.relDir + "/" + ls.base + "." + strconv.Itoa(idx), Offset: off, Data: buf[:n]}); err != nil {
				return err
			}
			lastSent = time.Now()
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read log file: %w", err)
		}
		// At the end of file idx.
		next, ok, err := ls.nextIndex(idx)
		if err != nil {
			return err
		}
		if ok {
			// The writer moved on; what it wrote here before creating the
			// next file is there now.
			if drained, err := ls.drain(f, buf, idx, &off, emit); err != nil {
				return err
			} else if drained {
				lastSent = time.Now()
			}
			f.Close()
			f = nil
			idx, off = next, 0
			continue
		}
		if !ls.follow {
			return nil
		}
		if fi, err := f.Stat(); err == nil && fi.Size() < off {
			// Truncated: start over at its beginning.
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return fmt.Errorf("seek log file: %w", err)
			}
			off = 0
			if err := emit(streamFrame{File: ls.relDir + "/" + ls.base + "." + strconv.Itoa(idx), FileEvent: "file truncated"}); err != nil {
				return err
			}
		}
		if err := ls.wait(ctx, &lastSent, emit); err != nil {
			return err
		}
	}
}

// drain emits what is left in f; it reports whether it emitted anything.
func (ls *logStream) drain(f *os.File, buf []byte, idx int, off *int64, emit func(streamFrame) error) (bool, error) {
	sent := false
	for {
		n, err := f.Read(buf)
		if n > 0 {
			*off += int64(n)
			if err := emit(streamFrame{File: ls.relDir + "/" + ls.base + "." + strconv.Itoa(idx), Offset: *off, Data: buf[:n]}); err != nil {
				return sent, err
			}
			sent = true
			continue
		}
		if err == nil || errors.Is(err, io.EOF) {
			return sent, nil
		}
		return sent, fmt.Errorf("read log file: %w", err)
	}
}

// wait waits one poll interval, sending a heartbeat frame when the stream
// has been idle for the heartbeat interval.
func (ls *logStream) wait(ctx context.Context, lastSent *time.Time, emit func(streamFrame) error) error {
	t := time.NewTimer(ls.poll)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	if ls.heartbeat > 0 && time.Since(*lastSent) >= ls.heartbeat {
		if err := emit(streamFrame{}); err != nil {
			return err
		}
		*lastSent = time.Now()
	}
	return nil
}
