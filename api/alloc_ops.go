package api

import (
	"net/http"
	"net/url"
)

// AllocationRestartRequest is the body of an allocation restart: one task
// (TaskName), or every task (AllTasks, or neither set: the running ones).
type AllocationRestartRequest struct {
	TaskName string
	AllTasks bool
}

// AllocSignalRequest is the body of an allocation signal: Signal ("SIGHUP")
// to one task, or to every running task when Task is empty.
type AllocSignalRequest struct {
	Task   string
	Signal string
}

// AllocStopResponse names the evaluation that replaces a stopped
// allocation.
type AllocStopResponse struct {
	EvalID string
	WriteMeta
}

// GCResponse lists the allocations a garbage collection removed (a drover
// extension; Nomad's agents answer with an empty body).
type GCResponse struct {
	Collected []string
}

func allocPath(alloc *Allocation, suffix string) string {
	return "/v1/client/allocation/" + url.PathEscape(alloc.ID) + suffix
}

// Restart restarts one task of the allocation, or its running tasks when
// taskName is empty. The agent that runs the allocation must be the one
// this client talks to.
func (a *Allocations) Restart(alloc *Allocation, taskName string, q *QueryOptions) error {
	_, err := a.c.write(http.MethodPut, allocPath(alloc, "/restart"), &AllocationRestartRequest{TaskName: taskName}, nil, writeOpts(q))
	return err
}

// RestartAllTasks restarts every task of the allocation.
func (a *Allocations) RestartAllTasks(alloc *Allocation, q *QueryOptions) error {
	_, err := a.c.write(http.MethodPut, allocPath(alloc, "/restart"), &AllocationRestartRequest{AllTasks: true}, nil, writeOpts(q))
	return err
}

// Signal sends signal to one task of the allocation, or to its running
// tasks when task is empty.
func (a *Allocations) Signal(alloc *Allocation, q *QueryOptions, task, signal string) error {
	_, err := a.c.write(http.MethodPut, allocPath(alloc, "/signal"), &AllocSignalRequest{Task: task, Signal: signal}, nil, writeOpts(q))
	return err
}

// Stop stops the allocation; the servers place a replacement as its job
// requires. The response names the evaluation that does it. Of q, the
// namespace and the "no_shuffle" parameter are sent.
func (a *Allocations) Stop(alloc *Allocation, q *QueryOptions) (*AllocStopResponse, error) {
	var resp AllocStopResponse
	endpoint := "/v1/allocation/" + url.PathEscape(alloc.ID) + "/stop"
	if q != nil && q.Params["no_shuffle"] != "" {
		endpoint += "?no_shuffle=" + url.QueryEscape(q.Params["no_shuffle"])
	}
	wm, err := a.c.write(http.MethodPut, endpoint, nil, &resp, writeOpts(q))
	if err != nil {
		return nil, err
	}
	resp.WriteMeta = *wm
	return &resp, nil
}

// GC removes one terminal allocation's directory and local state from the
// agent's client now.
func (a *Allocations) GC(alloc *Allocation, q *QueryOptions) error {
	_, err := a.c.query(allocPath(alloc, "/gc"), nil, q)
	return err
}

// System is the /v1/system endpoints.
type System struct{ c *Client }

// System returns the /v1/system endpoints.
func (c *Client) System() *System { return &System{c: c} }

// GarbageCollect makes the servers collect every dead job, terminal
// evaluation and allocation, finished deployment and down node now, then
// the agent's client (when it runs one) remove its terminal allocations;
// it returns the IDs the client removed.
func (s *System) GarbageCollect() (*GCResponse, error) {
	var resp GCResponse
	if _, err := s.c.write(http.MethodPut, "/v1/system/gc", nil, &resp, nil); err != nil {
		return nil, err
	}
	return &resp, nil
}

func writeOpts(q *QueryOptions) *WriteOptions {
	if q == nil {
		return nil
	}
	return &WriteOptions{Namespace: q.Namespace}
}
