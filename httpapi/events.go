package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/structs"
)

// eventHeartbeat is how often an idle event stream writes "{}".
const eventHeartbeat = 10 * time.Second

// EventStream is the server's event stream (server/events).
type EventStream interface {
	// SubscribeEvents starts reading at the first buffered batch whose
	// index is at least index (0: the oldest buffered, as Nomad's
	// stream; past the buffer: the next one published), filtered by
	// topics (topic -> keys, "*" for all) and namespace ("*" for all).
	SubscribeEvents(index uint64, topics map[string][]string, namespace string) EventSubscription
}

// EventSubscription reads the event stream.
type EventSubscription interface {
	// Next waits for the next batch the subscription matches. An error
	// other than ctx's means the subscriber was dropped.
	Next(ctx context.Context) (structs.StreamEvents, error)
}

// eventTopics are the topics a subscription may name.
var eventTopics = map[string]bool{
	structs.TopicJob: true, structs.TopicAllocation: true, structs.TopicEvaluation: true,
	structs.TopicDeployment: true, structs.TopicNode: true, structs.TopicAll: true,
	structs.TopicNodeDrain: true, structs.TopicService: true,
}

func (s *Server) registerEventRoute(rt *router) {
	rt.handle("/v1/event/stream", http.HandlerFunc(s.eventStream), http.MethodGet)
}

// eventStream is GET /v1/event/stream[?topic=Job:web&topic=Node&index=N&namespace=ns]:
// newline-delimited JSON, one {"Index":N,"Events":[...]} per raft apply
// and "{}" every 10 s while idle, until the client leaves or falls too
// far behind.
func (s *Server) eventStream(w http.ResponseWriter, req *http.Request) {
	if s.events == nil {
		writeError(w, req, structs.NewError(structs.KindUnavailable,
			"this agent runs no server: ask a server agent's HTTP API for /v1/event/stream"))
		return
	}
	q := req.URL.Query()
	topics, err := parseEventTopics(q["topic"])
	if err != nil {
		writeError(w, req, err)
		return
	}
	var index uint64
	if v := q.Get("index"); v != "" {
		if index, err = strconv.ParseUint(v, 10, 64); err != nil {
			writeError(w, req, structs.NewError(structs.KindInvalid, "index=%q is not a raft index (a non-negative integer)", v))
			return
		}
	}
	namespace := q.Get("namespace")
	if namespace == "" {
		namespace = structs.DefaultNamespace
	}
	sub := s.events.SubscribeEvents(index, topics, namespace)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	enc := json.NewEncoder(w)
	_ = rc.Flush()
	ctx := req.Context()
	for {
		next, cancel := context.WithTimeout(ctx, eventHeartbeat)
		batch, err := sub.Next(next)
		cancel()
		var out any = batch
		switch {
		case err == nil:
			if g := grantOf(ctx); g != nil {
				kept := batch.Events[:0:0]
				for i := range batch.Events {
					if allowEvent(g, &batch.Events[i]) {
						kept = append(kept, batch.Events[i])
					}
				}
				if len(kept) == 0 {
					continue
				}
				batch.Events = kept
				out = batch
			}
		case ctx.Err() != nil:
			return // the client left or the server stops
		case errors.Is(err, context.DeadlineExceeded):
			out = struct{}{} // heartbeat
		default:
			s.logger.Warn("event stream subscriber dropped", "remote", req.RemoteAddr, "error", err)
			return
		}
		if err := enc.Encode(out); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

// parseEventTopics reads topic=Topic[:key] parameters; none means every
// event. A key holding a colon is refused.
func parseEventTopics(params []string) (map[string][]string, error) {
	if len(params) == 0 {
		return map[string][]string{structs.TopicAll: {"*"}}, nil
	}
	out := map[string][]string{}
	for _, p := range params {
		topic, key, ok := strings.Cut(p, ":")
		if strings.Contains(key, ":") {
			// Nomad's wording, which its API clients match.
			return nil, structs.NewError(structs.KindInvalid,
				"Invalid key value pair for topic=%q: give Topic or Topic:key, the key (a job ID, allocation ID, ... or *) without a colon", p)
		}
		if !ok || key == "" {
			key = "*"
		}
		if !eventTopics[topic] {
			return nil, structs.NewError(structs.KindInvalid,
				"topic=%q: unknown topic %q; use Job, Allocation, Evaluation, Deployment, Node, NodeDrain, Service or *, optionally followed by :<key> (a job ID, allocation ID, ...)", p, topic)
		}
		out[topic] = append(out[topic], key)
	}
	return out, nil
}
