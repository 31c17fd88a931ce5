package command

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/logmonitor"
)

// Defaults of operator debug, as Nomad's.
const (
	defaultDebugDuration = 2 * time.Minute
	defaultDebugInterval = 30 * time.Second
)

func runOperatorDebug(m *Meta, args []string) int {
	fset := m.apiFlagSet("operator debug", "[options]", `
Collect what a bug report needs from the agent at -address into a bundle:
the agent's description (agent-self.json) and the cluster's servers
(members.json); its goroutine and heap profiles when the agent serves them
(enable_debug = true); the cluster's nodes, jobs, allocations and
evaluations at the start and every -interval (interval/0000/, ...); and
the agent's log lines at -log-level for -duration (monitor.log).

Without -output the bundle is an archive, drover-debug-<time>.tar.gz, in
the current directory; with -output it is a directory under that one.
Ctrl-C ends the capture early and still writes the bundle.`)
	duration := fset.Duration("duration", defaultDebugDuration, "How long to capture the logs and the cluster's state.")
	interval := fset.Duration("interval", defaultDebugInterval, "How often to capture the cluster's state within -duration.")
	output := fset.String("output", "", "Write the bundle as a directory under this one instead of an archive in the current directory.")
	level := fset.String("log-level", "trace", "The lowest level of the log lines captured: trace, debug, info, warn or error.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "this command takes no arguments")
	}
	if *duration < 0 || *interval <= 0 {
		return m.usageError(fset, "-duration must not be negative and -interval must be positive")
	}
	if _, err := logmonitor.ParseLevel(*level); err != nil {
		return m.usageError(fset, "-log-level: "+err.Error())
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	name := "drover-debug-" + m.now().UTC().Format("2006-01-02-150405Z")
	var dir, archive string
	if *output != "" {
		dir = filepath.Join(*output, name)
		if err := os.MkdirAll(*output, 0o755); err != nil {
			return m.fail("creating the output directory", err)
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			return m.fail("creating the bundle directory", err)
		}
	} else {
		tmp, err := os.MkdirTemp("", "drover-debug-")
		if err != nil {
			return m.fail("creating a directory for the bundle", err)
		}
		defer os.RemoveAll(tmp)
		dir, archive = filepath.Join(tmp, name), name+".tar.gz"
		if err := os.Mkdir(dir, 0o755); err != nil {
			return m.fail("creating the bundle directory", err)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d := &debugCapture{m: m, c: c.WithContext(ctx), dir: dir}
	where := dir
	if archive != "" {
		where = archive
	}
	fmt.Fprintf(m.stdout, "Starting debugger...\n\n%s\n", formatKV([]kv{
		{"Agent", c.Address()}, {"Duration", duration.String()}, {"Interval", interval.String()},
		{"Log level", strings.ToUpper(*level)}, {"Output", where},
	}))
	// The agent must answer before anything else is worth trying.
	self, err := c.Agent().Self()
	if err != nil {
		return m.fail("reading the agent's description", err)
	}
	d.writeJSON("agent-self.json", self)
	d.capture("members.json", func() (any, error) { return d.c.Agent().Members() })
	d.profiles()

	// The logs for the whole duration, beside the interval captures.
	logCtx, endLogs := context.WithTimeout(ctx, *duration)
	defer endLogs()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.monitor(logCtx, *level)
	}()
	d.intervals(logCtx, *interval)
	endLogs()
	wg.Wait()

	if len(d.errs) > 0 {
		d.writeFile("errors.txt", []byte(strings.Join(d.errs, "\n")+"\n"))
	}
	if archive == "" {
		fmt.Fprintf(m.stdout, "\nCreated debug directory: %s\n", dir)
		return exitOK
	}
	if err := writeTarGz(archive, filepath.Dir(dir), name); err != nil {
		return m.fail("writing the bundle's archive", err)
	}
	fmt.Fprintf(m.stdout, "\nCreated debug archive: %s\n", archive)
	return exitOK
}

// debugCapture writes the files of one operator debug bundle and records
// what failed (errors.txt), showing progress as it goes.
type debugCapture struct {
	m   *Meta
	c   *api.Client
	dir string

	mu   sync.Mutex // guards the field below
	errs []string
}

// failed records and shows a capture that did not work.
func (d *debugCapture) failed(what string, err error) {
	msg := fmt.Sprintf("%s: %s", what, api.ErrorMessage(err))
	d.mu.Lock()
	defer d.mu.Unlock()
	d.errs = append(d.errs, msg)
	fmt.Fprintf(d.m.stdout, "  ! %s\n", msg)
}

// writeFile writes a file of the bundle (rel is slash-separated).
func (d *debugCapture) writeFile(rel string, data []byte) {
	path := filepath.Join(d.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		d.failed("write "+rel, err)
		return
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		d.failed("write "+rel, err)
	}
}

// writeJSON writes v, indented, as rel.
func (d *debugCapture) writeJSON(rel string, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		d.failed("encode "+rel, err)
		return
	}
	d.writeFile(rel, append(b, '\n'))
}

// capture writes what get returns as rel, or records its error.
func (d *debugCapture) capture(rel string, get func() (any, error)) {
	v, err := get()
	if err != nil {
		d.failed(rel, err)
		return
	}
	d.writeJSON(rel, v)
}

// profiles writes the agent's goroutine and heap profiles, when it serves
// them.
func (d *debugCapture) profiles() {
	profiles := []struct {
		file, name string
		opts       api.PprofOptions
	}{
		{"goroutine.prof", "goroutine", api.PprofOptions{}},
		{"goroutine-debug2.txt", "goroutine", api.PprofOptions{Debug: 2}},
		{"heap.prof", "heap", api.PprofOptions{}},
	}
	for _, p := range profiles {
		b, err := d.c.Agent().Lookup(p.name, p.opts, nil)
		var ue *api.UnexpectedResponseError
		if errors.As(err, &ue) && ue.StatusCode == http.StatusForbidden {
			fmt.Fprintln(d.m.stdout, "Profiles skipped: the agent serves them only with enable_debug = true in its configuration")
			return
		}
		if err != nil {
			d.failed(p.file, err)
			continue
		}
		d.writeFile(p.file, b)
	}
	fmt.Fprintln(d.m.stdout, "Captured profiles: goroutine, heap")
}

// intervals captures the cluster's state now and every interval until
// ctx ends.
func (d *debugCapture) intervals(ctx context.Context, interval time.Duration) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for i := 0; ; i++ {
		d.interval(i)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// interval writes capture i: the nodes, jobs, allocations and
// evaluations, of every namespace.
func (d *debugCapture) interval(i int) {
	fmt.Fprintf(d.m.stdout, "Capturing interval %04d\n", i)
	dir := fmt.Sprintf("interval/%04d/", i)
	all := &api.QueryOptions{Namespace: "*"}
	d.capture(dir+"nodes.json", func() (any, error) { l, _, err := d.c.Nodes().List(nil); return l, err })
	d.capture(dir+"jobs.json", func() (any, error) { l, _, err := d.c.Jobs().List(all); return l, err })
	d.capture(dir+"allocations.json", func() (any, error) { l, _, err := d.c.Allocations().List(all); return l, err })
	d.capture(dir+"evaluations.json", func() (any, error) { l, _, err := d.c.Evaluations().List(all); return l, err })
}

// monitor writes the agent's log lines at level to monitor.log until ctx
// ends.
func (d *debugCapture) monitor(ctx context.Context, level string) {
	f, err := os.Create(filepath.Join(d.dir, "monitor.log"))
	if err != nil {
		d.failed("monitor.log", err)
		return
	}
	defer f.Close()
	q := &api.QueryOptions{Params: monitorParams(level, false, false, "")}
	if err := copyMonitor(ctx, d.c.WithContext(ctx), f, q); err != nil && ctx.Err() == nil {
		d.failed("monitor.log", err)
	}
}

// writeTarGz archives the directory name under parent as path, its
// entries named name/....
func writeTarGz(path, parent, name string) (err error) {
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(path)
		}
	}()
	zw := gzip.NewWriter(out)
	tw := tar.NewWriter(zw)
	root := filepath.Join(parent, name)
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(parent, p)
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		if e.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !e.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return fmt.Errorf("archive %s: %w", root, err)
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}
