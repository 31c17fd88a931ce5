package docker

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/drover-io/drover/drivers/shared/logrotate"
	"github.com/drover-io/drover/plugins/drivers"
)

// Log rotation defaults when the task config leaves them unset.
const (
	defaultLogMaxFiles  = 10
	defaultLogMaxSizeMB = 10
)

// streamLogs copies the container's output into the task's rotating log
// files until the container stops. A broken stream is re-opened from the
// time of the last copied output.
func (t *task) streamLogs(ctx context.Context, c *client, logger *slog.Logger, since time.Time) {
	stdout, err := openLog(t.cfg.StdoutPath, t.cfg)
	if err != nil {
		logger.Error("cannot open stdout log; discarding output", "error", err)
	}
	stderr, err := openLog(t.cfg.StderrPath, t.cfg)
	if err != nil {
		logger.Error("cannot open stderr log; discarding output", "error", err)
	}
	defer closeLog(stdout)
	defer closeLog(stderr)
	out := &stampWriter{w: writerOrDiscard(stdout)}
	errw := &stampWriter{w: writerOrDiscard(stderr)}
	for {
		body, err := c.containerLogs(ctx, t.containerID, since, true)
		if err == nil {
			err = demux(out, errw, body)
			body.Close()
		}
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			return // the container stopped and its output is copied
		case isNotFound(err):
			return // the container is gone
		}
		logger.Warn("container log stream broke; reopening", "container_id", shortID(t.containerID), "error", err)
		last := out.lastWrite()
		if e := errw.lastWrite(); e.After(last) {
			last = e
		}
		if !last.IsZero() {
			since = last
		}
		if !sleepCtx(ctx, retryDelay) {
			return
		}
	}
}

// openLog opens a rotator for a driver log path such as
// "alloc/logs/web.stdout.0": the base is the file name without a trailing
// ".0". An empty path opens nothing.
func openLog(p string, cfg *drivers.TaskConfig) (*logrotate.FileRotator, error) {
	if p == "" {
		return nil, nil
	}
	files := cfg.LogMaxFiles
	if files <= 0 {
		files = defaultLogMaxFiles
	}
	sizeMB := cfg.LogMaxFileSizeMB
	if sizeMB <= 0 {
		sizeMB = defaultLogMaxSizeMB
	}
	dir, base := filepath.Split(p)
	base = strings.TrimSuffix(base, ".0")
	return logrotate.NewFileRotator(filepath.Clean(dir), base, files, int64(sizeMB)<<20)
}

func closeLog(r *logrotate.FileRotator) {
	if r != nil {
		_ = r.Close()
	}
}

func writerOrDiscard(r *logrotate.FileRotator) io.Writer {
	if r == nil {
		return io.Discard
	}
	return r
}

// stampWriter records when it last wrote, to resume a broken log stream.
type stampWriter struct {
	w    io.Writer
	mu   sync.Mutex // guards the field below
	last time.Time
}

func (s *stampWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.mu.Lock()
	s.last = time.Now()
	s.mu.Unlock()
	return n, err
}

func (s *stampWriter) lastWrite() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// logsResumeTime returns where a recovered task's log copy resumes: the
// newest modification time of its log files, as every line copied before
// was logged by the daemon before that. Zero (everything) when there are
// no files.
func logsResumeTime(cfg *drivers.TaskConfig) time.Time {
	var newest time.Time
	for _, p := range []string{cfg.StdoutPath, cfg.StderrPath} {
		if p == "" {
			continue
		}
		dir, base := filepath.Split(p)
		files, err := logrotate.Files(filepath.Clean(dir), strings.TrimSuffix(base, ".0"))
		if err != nil || len(files) == 0 {
			continue
		}
		if fi, err := os.Stat(files[len(files)-1]); err == nil && fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
	}
	return newest
}
