package structs

// EvalDeleteRequest deletes evaluations (DELETE /v1/evaluations): those
// named by EvalIDs, or those matching Filter (a go-bexpr expression over
// the evaluation's fields, as Nomad's), never both. The scheduler
// configuration's PauseEvalBroker must be set.
type EvalDeleteRequest struct {
	EvalIDs []string
	Filter  string
	WriteRequest
}

// EvalDeleteResponse tells how many evaluations were deleted.
type EvalDeleteResponse struct {
	Count int
	WriteMeta
}
