package structs

// EvalTriggerPeriodicJob marks the evaluation of a child launched from a
// periodic job; EvalTriggerJobDispatch one of a dispatched child.
const (
	EvalTriggerPeriodicJob = "periodic-job"
	EvalTriggerJobDispatch = "job-dispatch"
)

// PeriodicForceRequest launches a periodic job's child now.
type PeriodicForceRequest struct {
	Namespace string
	JobID     string
	WriteRequest
}

// PeriodicForceResponse names the launched child's evaluation.
type PeriodicForceResponse struct {
	// JobID is the launched child's ID.
	JobID           string
	EvalID          string
	EvalCreateIndex uint64
	WriteMeta
}

// JobDispatchRequest instantiates a parameterized job.
type JobDispatchRequest struct {
	Namespace string
	JobID     string
	Payload   []byte
	Meta      map[string]string
	// IDPrefixTemplate goes into the child's ID:
	// "<job>/dispatch-<template>-<unix>-<8 hex>".
	IDPrefixTemplate string
	// IdempotencyToken: a dispatch with the token of a child that still
	// exists answers that child instead of creating one.
	IdempotencyToken string
	// Priority, when above 0, is the child's priority instead of the
	// parent's.
	Priority int
	WriteRequest
}

// JobDispatchResponse names the dispatched child and its evaluation (none
// when the child is periodic itself).
type JobDispatchResponse struct {
	DispatchedJobID string
	EvalID          string
	EvalCreateIndex uint64
	JobCreateIndex  uint64
	WriteMeta
}
