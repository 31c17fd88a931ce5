package structs

// WriteRequest is embedded in the request of every write the server
// deduplicates: it applies a write once per RequestID and answers a repeat
// with the first one's reply, so that a caller may send a write again after
// a failure that leaves unknown whether it was applied (a timeout, a
// connection lost before the reply).
type WriteRequest struct {
	// RequestID names one write across its attempts; empty: no
	// deduplication (an in-process call, which is never repeated). The
	// caller that retries sets it before the first attempt.
	RequestID string
}

// WriteOpts returns w; requests that embed a WriteRequest so expose it.
func (w *WriteRequest) WriteOpts() *WriteRequest { return w }

// QueryOpts returns q; read requests that embed QueryOptions so expose
// them (a caller times a blocking query by its wait).
func (q *QueryOptions) QueryOpts() *QueryOptions { return q }

// JobSummaryResponse returns a job's summary: its allocations counted per
// group and client status.
type JobSummaryResponse struct {
	JobSummary *JobSummary
	QueryMeta
}

// AllocNodeResponse returns an allocation and the node it is placed on
// (nil when it is not placed, or the node is gone).
type AllocNodeResponse struct {
	Alloc *Allocation
	Node  *Node
	QueryMeta
}
