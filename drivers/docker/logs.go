package docker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/drover-io/drover/drivers/shared/logrotate"
	"github.com/drover-io/drover/plugins/drivers"
)

// Log rotation defaults when the task config leaves them unset.
const (
	defaultLogMaxFiles  = 10
	defaultLogMaxSizeMB = 10
)

// logStart is where a log copy starts: the messages logged at or after
// last, less the first atLast of those logged exactly at last (copied
// before).
type logStart struct {
	last   time.Time
	atLast int
}

// streamLogs copies the container's output into the task's rotating log
// files until the container stops and its output is copied, starting at
// since.
//
// Messages come with the daemon's timestamps, so that the copy can resume
// exactly where it stopped: after a broken stream, and after a follow
// stream that ended when the container stopped (Docker 20.10 can end one
// before its last messages; a final, non-following read fetches them).
func (t *task) streamLogs(ctx context.Context, c *client, logger *slog.Logger, since logStart) {
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
	lc := &logCopier{stdout: writerOrDiscard(stdout), stderr: writerOrDiscard(stderr), last: since.last, atLast: since.atLast}
	lc.resume()
	if lc.pos, err = openLogPosition(t.cfg.TaskDir.Dir, t.containerID); err != nil {
		logger.Warn("cannot record the log position; a restarted agent may copy some output twice", "error", err)
	}
	defer lc.pos.close()

	follow := true
	for {
		body, err := c.containerLogs(ctx, t.containerID, lc.last, follow, true)
		if err == nil {
			err = readFrames(body, lc.frame)
			body.Close()
		}
		lc.resume()
		switch {
		case ctx.Err() != nil:
			return
		case isNotFound(err):
			return // the container is gone
		case logsUnreadable(err):
			logger.Warn("the container's log driver cannot be read back; its output is not copied to the task's logs", "container_id", shortID(t.containerID), "error", err)
			return
		case err == nil && !follow:
			return // the final read after the container stopped
		case err == nil:
			// The follow stream ended: the container stopped (or the
			// daemon restarted with it running).
			info, ierr := c.inspectContainer(ctx, t.containerID)
			if isNotFound(ierr) {
				return
			}
			if ierr == nil && !info.State.Running {
				follow = false
				continue
			}
			if !sleepCtx(ctx, retryDelay) {
				return
			}
			continue
		}
		logger.Warn("container log stream broke; reopening", "container_id", shortID(t.containerID), "error", err)
		if !sleepCtx(ctx, retryDelay) {
			return
		}
	}
}

// logsUnreadable reports whether err says the container's log driver
// keeps nothing the logs endpoint can read (logging type "none", or a
// remote driver with the daemon's local copy turned off).
func logsUnreadable(err error) bool {
	return statusOf(err) == http.StatusNotImplemented || (err != nil && strings.Contains(err.Error(), "does not support reading"))
}

// logCopier writes timestamped log frames to the task's files, remembering
// the newest timestamp and how many messages carried it, so that a read
// resumed from that timestamp (which includes it) skips those.
type logCopier struct {
	stdout, stderr io.Writer
	pos            *logPosition // nil: not recorded
	// last is the newest timestamp copied; atLast counts the messages
	// copied with it; skip counts those still to skip in this read.
	last   time.Time
	atLast int
	skip   int
}

// frame copies one message, "<timestamp> <text>".
func (lc *logCopier) frame(kind byte, p []byte) error {
	w := lc.stdout
	if kind == streamStderr {
		w = lc.stderr
	}
	ts, text, ok := splitTimestamp(p)
	if ok {
		switch {
		case ts.Equal(lc.last) && lc.skip > 0:
			lc.skip--
			return nil // copied before this read
		case ts.Equal(lc.last):
			lc.atLast++
		case ts.After(lc.last):
			lc.last, lc.atLast = ts, 1
		}
	}
	if _, err := w.Write(text); err != nil {
		return fmt.Errorf("write log: %w", err)
	}
	if ok {
		// A failure here costs duplicates after an agent restart, not
		// output: the copy goes on.
		_ = lc.pos.save(lc.last, lc.atLast)
	}
	return nil
}

// resume prepares for a read from lc.last.
func (lc *logCopier) resume() { lc.skip = lc.atLast }

// splitTimestamp splits a message into the daemon's timestamp and the
// text; ok is false (text is p) when p does not start with one.
func splitTimestamp(p []byte) (ts time.Time, text []byte, ok bool) {
	i := bytes.IndexByte(p, ' ')
	if i <= 0 {
		return time.Time{}, p, false
	}
	ts, err := time.Parse(time.RFC3339Nano, string(p[:i]))
	if err != nil {
		return time.Time{}, p, false
	}
	return ts, p[i+1:], true
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
	if cfg.AllocDir != "" {
		// The container writes in the alloc dir (as root, often): open
		// the log dir beneath it without following links.
		return logrotate.NewFileRotatorBeneath(cfg.AllocDir, filepath.Clean(dir), base, files, int64(sizeMB)<<20)
	}
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

// recoveredLogStart returns where a recovered task's log copy resumes:
// the position the previous copy recorded or, without one, the newest
// modification time of the task's log files (every message copied before
// was logged by the daemon before that, give or take the file system's
// clock granularity). Zero (everything) when there is neither.
func recoveredLogStart(cfg *drivers.TaskConfig, containerID string) logStart {
	if last, atLast, ok := readLogPosition(cfg.TaskDir.Dir, containerID); ok {
		return logStart{last: last, atLast: atLast}
	}
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
	return logStart{last: newest}
}
