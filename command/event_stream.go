package command

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// topicFlags collects repeated -topic flags.
type topicFlags []string

func (t *topicFlags) String() string     { return strings.Join(*t, ",") }
func (t *topicFlags) Set(v string) error { *t = append(*t, v); return nil }

// maxEventLine bounds one line of the event stream (a batch of events
// with their jobs and allocations).
const maxEventLine = 64 << 20

func runEventStream(m *Meta, args []string) int {
	fset := m.apiFlagSet("event stream", "[options]", `
Print the cluster's event stream (GET /v1/event/stream): one JSON line per
raft apply, {"Index":N,"Events":[...]}, each event with its Topic, Type,
Key, Namespace, FilterKeys, Index and Payload (the changed job,
allocation, evaluation, deployment or node). It first replays what the
server still buffers from -index (0: its oldest event, as Nomad's stream
does), then follows new events as they happen. Heartbeats are not
printed. Ctrl-C stops it. Pipe it into jq to pick fields.`)
	var topics topicFlags
	fset.Var(&topics, "topic", `A topic to follow, "Topic" or "Topic:key" (Job, Allocation, Evaluation, Deployment, Node or *; the key is a job ID, allocation ID, ...). Repeat it for several; none follows every topic.`)
	index := fset.Uint64("index", 0, "Start from the first buffered event at or after this raft index; 0 replays every event the server still buffers (as Nomad's stream does), an index past the latest starts with the next event.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "this command takes no arguments; name topics with -topic")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	body, err := c.WithContext(ctx).EventStream(topics, *index, nil)
	if err != nil {
		return m.fail("opening the event stream", err)
	}
	defer body.Close()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), maxEventLine)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line == "{}" {
			continue
		}
		fmt.Fprintln(m.stdout, line)
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return m.fail("reading the event stream", err)
	}
	if ctx.Err() == nil {
		return m.fail("reading the event stream", fmt.Errorf("the agent ended the stream (it stopped, or this reader fell too far behind: resume with -index)"))
	}
	return exitOK
}
