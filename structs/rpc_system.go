package structs

// SystemRequest is the request of the servers' maintenance calls (system
// gc, system reconcile summaries), which take no arguments.
type SystemRequest struct {
	WriteRequest
}
