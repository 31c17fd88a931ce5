package agent

import (
	"github.com/drover-io/drover/httpapi"
	"github.com/drover-io/drover/server/events"
)

// eventStream serves the server's event broker to the HTTP API.
type eventStream struct{ b *events.Broker }

// SubscribeEvents implements httpapi.EventStream.
func (e eventStream) SubscribeEvents(index uint64, topics map[string][]string, namespace string) httpapi.EventSubscription {
	return e.b.Subscribe(index, topics, namespace)
}

// httpEvents returns the event stream the HTTP API serves: the server's,
// or nil on a client-only agent.
func (a *Agent) httpEvents() httpapi.EventStream {
	if a.server == nil {
		return nil
	}
	return eventStream{a.server.Events()}
}
