package command

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/drover-io/drover/api"
)

// Tail settings of alloc logs.
const (
	defaultTailLines = 10
	// tailBytesPerLine is the first guess of a line's length when fetching
	// the last lines; the guess grows until enough lines arrive.
	tailBytesPerLine = 128
	// maxTailBytes bounds how far back -tail -n looks.
	maxTailBytes = 64 << 20
)

func runAllocLogs(m *Meta, args []string) int {
	fset := m.apiFlagSet("alloc logs", "[options] <alloc-id> [task]", `
Print a task's stdout (or, with -stderr, its stderr), across its rotated
log files in order. The task may be left out when the allocation's group
has one task.

With -tail only the end is printed: the last 10 lines, the last -n lines,
or the last -c bytes. With -f the output follows what the task writes,
across log rotations, until interrupted (Ctrl-C).

The request goes to the agent of the node that runs the allocation: the
agent at -address may be any agent, which forwards it to that node's.`)
	follow := fset.Bool("f", false, "Follow the log: keep printing what the task writes until interrupted.")
	stderr := fset.Bool("stderr", false, "Print the task's stderr instead of its stdout.")
	tail := fset.Bool("tail", false, "Print only the end of the log (the last 10 lines unless -n or -c says).")
	lines := fset.Int("n", -1, "With -tail (implied), print the last n lines.")
	nbytes := fset.Int64("c", -1, "With -tail (implied), print the last c bytes.")
	task := fset.String("task", "", "The task whose logs to print.")
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() < 1 || fset.NArg() > 2 {
		return m.usageError(fset, "this command takes one or two arguments: the allocation ID and, optionally, a task")
	}
	if *lines >= 0 && *nbytes >= 0 {
		return m.usageError(fset, "-n and -c are exclusive: tail by lines or by bytes")
	}
	name, err := taskArg(*task, fset.Args())
	if err != nil {
		return m.usageError(fset, err.Error())
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	alloc, code := m.lookupAlloc(c, fset.Arg(0), *verbose)
	if alloc == nil {
		return code
	}
	if name == "" {
		tasks := allocTasks(alloc)
		if len(tasks) != 1 {
			fmt.Fprintf(m.stderr, "Error: allocation %s has %d tasks (%s): name the task as the second argument or with -task\n",
				shortID(alloc.ID, *verbose), len(tasks), strings.Join(tasks, ", "))
			return exitError
		}
		name = tasks[0]
	} else if !m.checkTask(alloc, name) {
		return exitError
	}
	logType := api.FSLogNameStdout
	if *stderr {
		logType = api.FSLogNameStderr
	}

	ctx := context.Background()
	if *follow {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	req := logRequest{c: c.WithContext(ctx), alloc: alloc, task: name, logType: logType}
	doing := fmt.Sprintf("reading the %s of task %q", logType, name)

	switch {
	case *nbytes >= 0:
		err = req.copy(ctx, m.stdout, api.OriginEnd, *nbytes, *follow)
	case *tail || *lines >= 0:
		n := *lines
		if n < 0 {
			n = defaultTailLines
		}
		var last string
		if last, err = req.lastLines(ctx, n); err != nil {
			break
		}
		if !*follow {
			_, err = io.WriteString(m.stdout, last)
			break
		}
		// Follow from where those lines start.
		err = req.copy(ctx, m.stdout, api.OriginEnd, int64(len(last)), true)
	default:
		err = req.copy(ctx, m.stdout, api.OriginStart, 0, *follow)
	}
	if err != nil && ctx.Err() == nil {
		return m.fail(doing, err)
	}
	return exitOK
}

// logRequest reads one log of one task.
type logRequest struct {
	c       *api.Client
	alloc   *api.Allocation
	task    string
	logType string
}

// copy writes the log from offset (relative to origin) to w, and with
// follow keeps writing until ctx ends or the agent ends the stream.
func (r logRequest) copy(ctx context.Context, w io.Writer, origin string, offset int64, follow bool) error {
	frames, errCh := r.c.AllocFS().Logs(r.alloc, follow, r.task, r.logType, origin, offset, ctx.Done(), nil)
	for f := range frames {
		if _, err := w.Write(f.Data); err != nil {
			return err
		}
	}
	select {
	case err := <-errCh:
		return err
	default:
		return nil
	}
}

// fetch returns the log from offset bytes before its end.
func (r logRequest) fetch(ctx context.Context, offset int64) (string, error) {
	var b strings.Builder
	if err := r.copy(ctx, &b, api.OriginEnd, offset, false); err != nil {
		return "", err
	}
	return b.String(), nil
}

// lastLines returns the last n lines of the log, fetching more of its end
// until it has them or the whole log.
func (r logRequest) lastLines(ctx context.Context, n int) (string, error) {
	if n == 0 {
		return "", nil
	}
	offset := max(int64(n)*tailBytesPerLine, 1024)
	for {
		text, err := r.fetch(ctx, offset)
		if err != nil {
			return "", err
		}
		if int64(len(text)) < offset || strings.Count(text, "\n") > n || offset >= maxTailBytes {
			return lastLines(text, n), nil
		}
		offset *= 4
	}
}

// lastLines returns the last n lines of text; a last line without a
// newline counts as a line.
func lastLines(text string, n int) string {
	if n <= 0 {
		return ""
	}
	end := len(text)
	if strings.HasSuffix(text, "\n") {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if text[i] == '\n' {
			n--
			if n == 0 {
				return text[i+1:]
			}
		}
	}
	return text
}
