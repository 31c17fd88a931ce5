package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"log/syslog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// validate checks the logging settings.
func (l LoggingConfig) validate() []error {
	var errs []error
	if l.RotateBytes < 0 || l.RotateMaxFiles < 0 || l.RotateDuration < 0 {
		errs = append(errs, errors.New("log_rotate_bytes, log_rotate_duration and log_rotate_max_files must not be negative"))
	}
	if _, err := syslogFacility(l.SyslogFacility); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// logSinks are what newLogger writes to besides stderr; the agent command
// closes them when it exits.
type logSinks struct {
	closers []io.Closer
}

// Close closes the log file and the syslog connection.
func (s *logSinks) Close() error {
	var errs []error
	for _, c := range s.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// syslogDialer connects to the local syslog daemon (log/syslog.New);
// tests dial a socket of their own.
type syslogDialer func(priority syslog.Priority, tag string) (*syslog.Writer, error)

// newLogger builds the agent's logger: text (or JSON with log_json) lines
// on stderr, the same lines in log_file when set (rotated by size and age),
// and with enable_syslog each record sent to syslog at its level. An
// unusable log file or an unreachable syslog daemon is an error saying
// what to change.
func newLogger(cfg *Config, stderr io.Writer, dial syslogDialer, now func() time.Time) (*slog.Logger, *logSinks, error) {
	level, err := parseLogLevel(cfg.LogLevel)
	if err != nil {
		return nil, nil, err
	}
	lc := cfg.Logging
	opts := &slog.HandlerOptions{Level: level, AddSource: lc.IncludeLocation}
	format := func(w io.Writer) slog.Handler {
		if lc.JSON {
			return slog.NewJSONHandler(w, opts)
		}
		return slog.NewTextHandler(w, opts)
	}
	sinks := &logSinks{}
	out := stderr
	if lc.File != "" {
		f, err := openLogFile(lc, now)
		if err != nil {
			return nil, nil, err
		}
		sinks.closers = append(sinks.closers, f)
		out = io.MultiWriter(stderr, f)
	}
	handlers := []slog.Handler{format(out)}
	if lc.EnableSyslog {
		facility, err := syslogFacility(lc.SyslogFacility)
		if err != nil {
			_ = sinks.Close()
			return nil, nil, err
		}
		if dial == nil {
			dial = syslog.New
		}
		w, err := dial(facility|syslog.LOG_INFO, "drover")
		if err != nil {
			_ = sinks.Close()
			return nil, nil, fmt.Errorf("enable_syslog: cannot reach the local syslog daemon: %w; start one (rsyslog, syslog-ng or systemd-journald listening on /dev/log) or set enable_syslog = false", err)
		}
		sinks.closers = append(sinks.closers, w)
		sw := &syslogLines{w: w}
		// Syslog stamps its own time.
		sopts := &slog.HandlerOptions{Level: level, AddSource: lc.IncludeLocation, ReplaceAttr: dropTime}
		handlers = append(handlers, &syslogHandler{Handler: slog.NewTextHandler(sw, sopts), lines: sw})
	}
	if len(handlers) == 1 {
		return slog.New(handlers[0]), sinks, nil
	}
	return slog.New(slog.NewMultiHandler(handlers...)), sinks, nil
}

func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// syslogFacility maps a facility name ("LOCAL0", "daemon") to its value.
func syslogFacility(name string) (syslog.Priority, error) {
	facilities := map[string]syslog.Priority{
		"KERN": syslog.LOG_KERN, "USER": syslog.LOG_USER, "MAIL": syslog.LOG_MAIL, "DAEMON": syslog.LOG_DAEMON,
		"AUTH": syslog.LOG_AUTH, "SYSLOG": syslog.LOG_SYSLOG, "LPR": syslog.LOG_LPR, "NEWS": syslog.LOG_NEWS,
		"UUCP": syslog.LOG_UUCP, "CRON": syslog.LOG_CRON, "AUTHPRIV": syslog.LOG_AUTHPRIV, "FTP": syslog.LOG_FTP,
		"LOCAL0": syslog.LOG_LOCAL0, "LOCAL1": syslog.LOG_LOCAL1, "LOCAL2": syslog.LOG_LOCAL2, "LOCAL3": syslog.LOG_LOCAL3,
		"LOCAL4": syslog.LOG_LOCAL4, "LOCAL5": syslog.LOG_LOCAL5, "LOCAL6": syslog.LOG_LOCAL6, "LOCAL7": syslog.LOG_LOCAL7,
	}
	if name == "" {
		name = DefaultSyslogFacility
	}
	f, ok := facilities[strings.ToUpper(name)]
	if !ok {
		return 0, fmt.Errorf("syslog_facility = %q is not a syslog facility: use LOCAL0 to LOCAL7, USER, DAEMON, ...", name)
	}
	return f, nil
}

// syslogHandler sends each record to syslog at the record's level.
type syslogHandler struct {
	slog.Handler // a text handler writing to lines
	lines        *syslogLines
}

// Handle formats r and sends it at r's priority.
func (h *syslogHandler) Handle(ctx context.Context, r slog.Record) error {
	h.lines.mu.Lock()
	defer h.lines.mu.Unlock()
	h.lines.level = r.Level
	return h.Handler.Handle(ctx, r)
}

// WithAttrs returns the handler with attrs added to every record.
func (h *syslogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &syslogHandler{Handler: h.Handler.WithAttrs(attrs), lines: h.lines}
}

// WithGroup returns the handler with later attributes in group name.
func (h *syslogHandler) WithGroup(name string) slog.Handler {
	return &syslogHandler{Handler: h.Handler.WithGroup(name), lines: h.lines}
}

// syslogLines writes each formatted line at the level of the record being
// handled (the text handler writes a record in one Write).
type syslogLines struct {
	w *syslog.Writer

	mu    sync.Mutex // held by syslogHandler.Handle; guards level
	level slog.Level
}

func (s *syslogLines) Write(p []byte) (int, error) {
	msg := strings.TrimRight(string(p), "\n")
	var err error
	switch {
	case s.level >= slog.LevelError:
		err = s.w.Err(msg)
	case s.level >= slog.LevelWarn:
		err = s.w.Warning(msg)
	case s.level >= slog.LevelInfo:
		err = s.w.Info(msg)
	default:
		err = s.w.Debug(msg)
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// openLogFile opens log_file for appending, creating its directory.
func openLogFile(lc LoggingConfig, now func() time.Time) (*rotatingFile, error) {
	path := lc.File
	if strings.HasSuffix(path, string(filepath.Separator)) {
		path = filepath.Join(path, DefaultLogFileName)
	} else if info, err := os.Stat(path); err == nil && info.IsDir() {
		path = filepath.Join(path, DefaultLogFileName)
	}
	if now == nil {
		now = time.Now
	}
	r := &rotatingFile{path: path, maxBytes: int64(lc.RotateBytes), maxAge: lc.RotateDuration, maxFiles: lc.RotateMaxFiles, now: now}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("log_file %q: %w", lc.File, err)
	}
	if err := r.open(); err != nil {
		return nil, fmt.Errorf("log_file %q: %w", lc.File, err)
	}
	return r, nil
}

// rotatingFile is the agent's log file. When a write would take it past
// maxBytes, or it is older than maxAge, it is renamed to
// "<name>-<unix nanoseconds><ext>" beside it and a new file is started;
// with maxFiles > 0 only that many rotated files are kept.
type rotatingFile struct {
	path     string
	maxBytes int64
	maxAge   time.Duration
	maxFiles int
	now      func() time.Time

	mu     sync.Mutex // guards the fields below
	f      *os.File
	size   int64
	opened time.Time
}

func (r *rotatingFile) open() error {
	f, err := os.OpenFile(r.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return err
	}
	r.f, r.size, r.opened = f, info.Size(), r.now()
	return nil
}

// Write appends p, rotating first when needed.
func (r *rotatingFile) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, errors.New("log file is closed")
	}
	full := r.maxBytes > 0 && r.size > 0 && r.size+int64(len(p)) > r.maxBytes
	old := r.maxAge > 0 && r.now().Sub(r.opened) >= r.maxAge
	if full || old {
		if err := r.rotate(); err != nil {
			return 0, fmt.Errorf("rotate log file: %w", err)
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

// rotate moves the current file aside, starts a new one and prunes the
// oldest rotated files.
func (r *rotatingFile) rotate() error {
	if err := r.f.Close(); err != nil {
		return err
	}
	r.f = nil
	ext := filepath.Ext(r.path)
	stem := strings.TrimSuffix(r.path, ext)
	if err := os.Rename(r.path, fmt.Sprintf("%s-%d%s", stem, r.now().UnixNano(), ext)); err != nil {
		return err
	}
	if err := r.open(); err != nil {
		return err
	}
	if r.maxFiles <= 0 {
		return nil
	}
	matches, err := filepath.Glob(stem + "-*" + ext)
	if err != nil {
		return err
	}
	var rotated []string
	for _, m := range matches {
		stamp := strings.TrimSuffix(strings.TrimPrefix(m, stem+"-"), ext)
		if stamp != "" && strings.Trim(stamp, "0123456789") == "" {
			rotated = append(rotated, m)
		}
	}
	slices.Sort(rotated) // equal-length nanosecond stamps sort by age
	for len(rotated) > r.maxFiles {
		if err := os.Remove(rotated[0]); err != nil {
			return err
		}
		rotated = rotated[1:]
	}
	return nil
}

// Close closes the file.
func (r *rotatingFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
