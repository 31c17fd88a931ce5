package structs

import "time"

// EvaluationStub is the summary of an evaluation: what an evaluation's
// RelatedEvals list (GET /v1/evaluation/:id?related=true).
type EvaluationStub struct {
	ID                string
	Namespace         string
	Priority          int
	Type              string
	TriggeredBy       string
	JobID             string
	NodeID            string
	DeploymentID      string
	Status            string
	StatusDescription string
	WaitUntil         time.Time
	NextEval          string
	PreviousEval      string
	BlockedEval       string
	CreateIndex       uint64
	ModifyIndex       uint64
	CreateTime        int64
	ModifyTime        int64
}

// Stub returns the summary of the evaluation.
func (e *Evaluation) Stub() *EvaluationStub {
	return &EvaluationStub{
		ID: e.ID, Namespace: e.Namespace, Priority: e.Priority, Type: e.Type, TriggeredBy: e.TriggeredBy,
		JobID: e.JobID, NodeID: e.NodeID, DeploymentID: e.DeploymentID, Status: e.Status, StatusDescription: e.StatusDescription,
		WaitUntil: e.WaitUntil, NextEval: e.NextEval, PreviousEval: e.PreviousEval, BlockedEval: e.BlockedEval,
		CreateIndex: e.CreateIndex, ModifyIndex: e.ModifyIndex, CreateTime: e.CreateTime, ModifyTime: e.ModifyTime,
	}
}
