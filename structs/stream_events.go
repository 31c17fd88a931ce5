package structs

// Event stream topics, as Nomad names them (GET /v1/event/stream).
const (
	TopicJob        = "Job"
	TopicAllocation = "Allocation"
	TopicEvaluation = "Evaluation"
	TopicDeployment = "Deployment"
	TopicNode       = "Node"
	// TopicNodeDrain carries a node whose drain or scheduling
	// eligibility changed.
	TopicNodeDrain = "NodeDrain"
	// TopicService carries service registrations and deregistrations.
	TopicService = "Service"
	// TopicAll in a subscription matches every topic.
	TopicAll = "*"
)

// StreamEvent is one change in the event stream: Payload holds the
// changed object under the name Nomad uses ("Job": *Job, "Allocation":
// *Allocation, ...). Payload objects are read-only state store objects.
type StreamEvent struct {
	Topic      string
	Type       string
	Key        string
	Namespace  string
	FilterKeys []string
	Index      uint64
	Payload    map[string]any
}

// StreamEvents is the events of one raft apply, as one line of the event
// stream carries them.
type StreamEvents struct {
	Index  uint64
	Events []StreamEvent
}
