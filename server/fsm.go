package server

import (
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/server/events"
	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// fsmObserver is told what the FSM applied, so that the leader can feed its
// eval broker and blocked-eval tracker. Calls happen on raft's FSM
// goroutine after the state commit and must not block.
type fsmObserver interface {
	// evalsUpserted reports evaluations written at index.
	evalsUpserted(evals []*structs.Evaluation)
	// capacityChanged reports that node capacity may have grown at index:
	// a node became ready, or allocations stopped or finished.
	capacityChanged(index uint64)
	// clusterMetaChanged reports that the cluster's identity was stored
	// (or restored from a snapshot).
	clusterMetaChanged()
	// applied reports that the state reached a new index (an entry
	// applied, or a snapshot restored).
	applied()
}

// FSM is the raft state machine: it decodes committed log entries and
// applies them to the state store.
type FSM struct {
	logger *slog.Logger
	handle *codec.MsgpackHandle
	// proposalHandle and jobHandle check what is proposed (storable):
	// they allow less nesting than handle, which reads it back.
	proposalHandle *codec.MsgpackHandle
	jobHandle      *codec.MsgpackHandle
	state          atomic.Pointer[state.StateStore]
	observer       fsmObserver // may be nil
	// events receives one batch per apply that changed a job,
	// allocation, evaluation, deployment or node (fsm_events.go); nil
	// publishes none.
	events *events.Broker
	// timers records how long plan results take to apply; nil records
	// nothing.
	timers Timers
}

var _ raft.FSM = (*FSM)(nil)

// newFSM returns an FSM over an empty state store. observer may be nil.
func newFSM(logger *slog.Logger, observer fsmObserver) (*FSM, error) {
	st, err := state.NewStateStore()
	if err != nil {
		return nil, err
	}
	f := &FSM{logger: logger, handle: newMsgpackHandle(), observer: observer,
		proposalHandle: newMsgpackHandleDepth(proposalDepth), jobHandle: newMsgpackHandleDepth(jobDepth)}
	f.state.Store(st)
	return f, nil
}

// proposal encodes a command for raft, proving first that it decodes back
// (storable). Plan results skip the decode: it is their largest cost
// (BenchmarkProposal: several times the encoding of a 1,000-allocation
// plan), and the only free-form values they carry are the jobs inside
// their allocations (TestPlanResultsHoldNoFreeFormValuesButJobs), read
// from the state store, where each arrived through storableJob, whose
// margin covers the depth they sit at in a plan result.
func (f *FSM) proposal(t MessageType, req any) ([]byte, error) {
	if t == ApplyPlanResultsRequestType {
		return encodeCommand(f.handle, t, req)
	}
	return storable(f.handle, f.proposalHandle, t, req)
}

// storableJob refuses a job that would not survive the trip through raft,
// plan results and snapshots: it must decode back, as its registration
// command, with jobHandle, whose margin covers the deeper places a job is
// stored in later.
func (f *FSM) storableJob(job *structs.Job) error {
	_, err := storable(f.handle, f.jobHandle, JobRegisterRequestType, &JobRegisterCommand{Job: job})
	if err != nil {
		return fmt.Errorf("job %q: %w", job.ID, err)
	}
	return nil
}

// State returns the current state store. It changes when a snapshot is
// restored; the old one's AbandonCh is closed then.
func (f *FSM) State() *state.StateStore { return f.state.Load() }

// Apply applies one committed entry. It returns nil or an error. An entry
// that cannot be applied (it does not decode, or applying it panics) is
// logged and skipped, leaving the state as it was: every server skips it
// alike, and raft goes on with the next entry instead of crashing the
// process on every replay.
func (f *FSM) Apply(l *raft.Log) (out any) {
	if l.Type != raft.LogCommand || len(l.Data) == 0 {
		return nil
	}
	t := MessageType(l.Data[0])
	defer func() {
		if r := recover(); r != nil {
			err := fmt.Errorf("apply %s entry at index %d: panic: %v", t, l.Index, r)
			f.logger.Error("raft entry skipped", "type", t.String(), "index", l.Index, "error", err, "stack", string(debug.Stack()))
			out = err
		}
	}()
	if f.observer != nil {
		defer f.observer.applied()
	}
	if t == ApplyPlanResultsRequestType && f.timers != nil {
		defer f.timers.MeasureSince(timerFSMPlanResults, time.Now())
	}
	resp, err := f.apply(t, l.Data[1:], l.Index, nil)
	if err != nil {
		f.logger.Error("apply raft entry", "type", t.String(), "index", l.Index, "error", err)
		return err
	}
	return resp
}

// apply applies one command; resp is what the command answers besides
// success (SchedulerConfigRequestType: whether the CAS write happened).
// rec, when not nil, is the record of the deduplicated write the command
// belongs to (WriteOnceRequestType): it is stored in the command's
// transaction, with resp as its Result.
func (f *FSM) apply(t MessageType, body []byte, index uint64, rec *state.WriteRecord) (resp any, err error) {
	st := f.State()
	var evals []*structs.Evaluation
	var changes []state.Change
	capacity := false
	// batch commits fn's changes at index, with rec, and keeps the list
	// of what changed for the event stream.
	batch := func(fn func(w *state.WriteTxn) error) error {
		c, err := st.BatchChanges(index, func(w *state.WriteTxn) error {
			if err := fn(w); err != nil {
				return err
			}
			if rec == nil {
				return nil
			}
			rec.Result = resp
			return w.RecordWrite(rec, writeRecordTTL, maxWriteRecords)
		})
		changes = append(changes, c...)
		return err
	}
	switch t {
	case WriteOnceRequestType:
		if rec != nil {
			return nil, fmt.Errorf("apply %s: a write-once command inside another", t)
		}
		var cmd WriteOnceCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		if prev, err := st.WriteRecordByID(cmd.RequestID); err != nil || prev != nil {
			// A repeat of a write already applied: applied no more.
			return prev, err
		}
		rec := &state.WriteRecord{ID: cmd.RequestID, Index: index, Time: cmd.Time, ReplyType: cmd.ReplyType, Reply: cmd.Reply}
		if _, err := f.apply(cmd.Type, cmd.Body, index, rec); err != nil {
			return nil, err
		}
		return rec, nil
	case JobRegisterRequestType:
		var cmd JobRegisterCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		if cmd.Job == nil || (cmd.Eval == nil && !cmd.Job.IsTemplate()) {
			return nil, fmt.Errorf("%s without a job or an evaluation", t)
		}
		if cmd.Eval != nil {
			cmd.Eval.JobModifyIndex = index
			evals = []*structs.Evaluation{cmd.Eval}
		}
		err = batch(func(w *state.WriteTxn) error {
			if cmd.CheckNamespace {
				if err := w.CheckNamespace(cmd.Job.Namespace); err != nil {
					return err
				}
			}
			if j := cmd.Job; j.Dispatched && j.DispatchIdempotencyToken != "" {
				prev, err := w.DispatchedChildByToken(j.Namespace, j.ParentID, j.DispatchIdempotencyToken)
				if err != nil {
					return err
				}
				if prev != nil && prev.ID != j.ID {
					return structs.NewError(structs.KindConflict, "%s %q: job %q was dispatched with it", dispatchTokenUsed, j.DispatchIdempotencyToken, prev.ID)
				}
			}
			if err := w.UpsertJob(cmd.Job); err != nil {
				return err
			}
			if sub := cmd.Submission; sub != nil {
				sub.Namespace, sub.JobID, sub.Version = cmd.Job.Namespace, cmd.Job.ID, cmd.Job.Version
				if err := w.UpsertJobSubmission(sub); err != nil {
					return err
				}
			}
			if err := w.EnsurePeriodicLaunch(cmd.Job); err != nil { // state/periodic.go
				return err
			}
			if cmd.PeriodicLaunch != nil {
				if err := w.UpsertPeriodicLaunch(cmd.PeriodicLaunch); err != nil {
					return err
				}
			}
			return w.UpsertEvals(evals)
		})
	case JobDeregisterRequestType:
		var cmd JobDeregisterCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		if cmd.Eval == nil || (!cmd.Purge && cmd.Job == nil) {
			return nil, fmt.Errorf("%s without a job or an evaluation", t)
		}
		cmd.Eval.JobModifyIndex = index
		evals = []*structs.Evaluation{cmd.Eval}
		err = batch(func(w *state.WriteTxn) error {
			if cmd.Purge {
				if err := w.DeleteJob(cmd.Namespace, cmd.JobID); err != nil {
					return err
				}
			} else if err := w.UpsertJob(cmd.Job); err != nil {
				return err
			}
			return w.UpsertEvals(evals)
		})
	case EvalUpdateRequestType:
		var cmd EvalUpdateCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		evals = cmd.Evals
		err = batch(func(w *state.WriteTxn) error { return w.UpsertEvals(evals) })
	case ApplyPlanResultsRequestType:
		var cmd PlanResultCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		if err := denormalizePlanResult(&cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		evals = cmd.Evals
		for _, a := range cmd.Allocs {
			if a.ServerTerminalStatus() {
				capacity = true
			}
		}
		err = batch(func(w *state.WriteTxn) error {
			if err := w.UpsertAllocs(cmd.Allocs); err != nil {
				return err
			}
			for _, d := range cmd.Deployments {
				if err := w.UpsertDeployment(d); err != nil {
					return err
				}
			}
			return w.UpsertEvals(evals)
		})
	case NodeRegisterRequestType:
		var cmd NodeRegisterCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		if cmd.Node == nil {
			return nil, fmt.Errorf("%s without a node", t)
		}
		evals = cmd.Evals
		capacity = cmd.Node.Status == structs.NodeStatusReady
		err = batch(func(w *state.WriteTxn) error {
			if err := w.UpsertNode(cmd.Node); err != nil {
				return err
			}
			return w.UpsertEvals(evals)
		})
	case NodeUpdateStatusRequestType:
		var cmd NodeStatusCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		evals = cmd.Evals
		capacity = cmd.Status == structs.NodeStatusReady
		err = batch(func(w *state.WriteTxn) error {
			if err := w.UpdateNodeStatus(cmd.NodeID, cmd.Status, cmd.UpdatedAt); err != nil {
				return err
			}
			if err := w.UpdateAllocsFromClient(cmd.LostAllocs); err != nil {
				return err
			}
			return w.UpsertEvals(evals)
		})
	case NodeDeregisterRequestType:
		var cmd NodeDeregisterCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		evals = cmd.Evals
		err = batch(func(w *state.WriteTxn) error {
			if err := w.UpdateAllocsFromClient(cmd.LostAllocs); err != nil {
				return err
			}
			if err := w.UpsertEvals(evals); err != nil {
				return err
			}
			return w.DeleteNode(cmd.NodeID)
		})
	case AllocClientUpdateRequestType:
		var cmd AllocClientUpdateCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		evals = cmd.Evals
		for _, a := range cmd.Allocs {
			if a.ClientTerminalStatus() {
				capacity = true
			}
		}
		err = batch(func(w *state.WriteTxn) error {
			if err := w.UpdateAllocsFromClient(cmd.Allocs); err != nil {
				return err
			}
			return w.UpsertEvals(evals)
		})
	case SchedulerConfigRequestType:
		var cmd SchedulerConfigCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		updated := false
		err = batch(func(w *state.WriteTxn) error {
			var err error
			updated, err = w.SetSchedulerConfig(&cmd.Config, cmd.CAS)
			resp = updated
			return err
		})
		// Preemption may have been switched on: blocked evals may now fit.
		capacity = updated
	case VarSetRequestType, VarDeleteRequestType, VarRekeyRequestType, VarLockRequestType, RootKeyAddRequestType, RootKeyDeleteRequestType:
		err = f.applyVariables(t, body, batch, &resp)
	case ClusterMetaRequestType:
		var cmd ClusterMetaCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		err = batch(func(w *state.WriteTxn) error {
			_, err := w.SetClusterMetadata(&cmd.Meta)
			return err
		})
		if err == nil && f.observer != nil {
			f.observer.clusterMetaChanged()
		}
	case AutopilotConfigRequestType:
		var cmd AutopilotConfigCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		err = batch(func(w *state.WriteTxn) error {
			updated, err := w.SetAutopilotConfig(&cmd.Config, cmd.CAS)
			resp = updated
			return err
		})
	case ServiceUpsertRequestType, ServiceDeleteRequestType:
		err = f.applyServices(t, body, batch, &resp)
	case EvalDeleteRequestType:
		var cmd EvalDeleteCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		err = batch(func(w *state.WriteTxn) error { return w.DeleteGarbage(&state.Garbage{Evals: cmd.EvalIDs}) })
	case NodeUpdateDrainRequestType, AllocDesiredTransitionRequestType, GCRequestType:
		err = f.applyNodeOps(t, body, batch, &evals, &capacity) // fsm_nodes.go
	case ACLBootstrapRequestType, ACLPolicyUpsertRequestType, ACLPolicyDeleteRequestType, ACLTokenUpsertRequestType,
		ACLTokenDeleteRequestType, ACLRoleUpsertRequestType, ACLRoleDeleteRequestType, ACLServerSecretRequestType:
		err = f.applyACL(t, body, index, batch)
	case ACLAuthMethodUpsertRequestType, ACLAuthMethodDeleteRequestType, ACLBindingRuleUpsertRequestType,
		ACLBindingRuleDeleteRequestType, OneTimeTokenUpsertRequestType, OneTimeTokenExchangeRequestType:
		err = f.applyACLAuth(t, body, batch) // fsm_acl_auth.go
	case NamespaceUpsertRequestType:
		var cmd NamespaceUpsertCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		err = batch(func(w *state.WriteTxn) error {
			for _, ns := range cmd.Namespaces {
				if err := w.UpsertNamespace(ns); err != nil {
					return err
				}
			}
			return nil
		})
	case NamespaceDeleteRequestType:
		var cmd NamespaceDeleteCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		err = batch(func(w *state.WriteTxn) error {
			for _, name := range cmd.Names {
				if err := w.DeleteNamespace(name); err != nil {
					return err
				}
			}
			return nil
		})
	case JobScalingEventRequestType:
		var cmd JobScalingEventCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		if cmd.Event == nil {
			return nil, fmt.Errorf("%s without an event", t)
		}
		err = batch(func(w *state.WriteTxn) error {
			return w.AddScalingEvent(cmd.Namespace, cmd.JobID, cmd.Group, cmd.Event)
		})
	case JobVersionTagRequestType:
		var cmd JobVersionTagCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		err = batch(func(w *state.WriteTxn) error {
			return w.SetJobVersionTag(cmd.Namespace, cmd.JobID, cmd.Version, cmd.Tag)
		})
	case NodePoolUpsertRequestType:
		var cmd NodePoolUpsertCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		err = batch(func(w *state.WriteTxn) error {
			for _, p := range cmd.NodePools {
				if err := w.UpsertNodePool(p); err != nil {
					return err
				}
			}
			return nil
		})
	case NodePoolDeleteRequestType:
		var cmd NodePoolDeleteCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", t, err)
		}
		err = batch(func(w *state.WriteTxn) error {
			for _, name := range cmd.Names {
				if err := w.DeleteNodePool(name); err != nil {
					return err
				}
			}
			return nil
		})
	default:
		return nil, fmt.Errorf("unknown raft message type %d", uint8(t))
	}
	if err != nil {
		return nil, fmt.Errorf("apply %s: %w", t, err)
	}
	if f.events != nil && len(changes) > 0 {
		for _, b := range eventBatches(t, index, changes) {
			f.events.Publish(b)
		}
	}
	if f.observer != nil {
		if len(evals) > 0 {
			f.observer.evalsUpserted(evals)
		}
		if capacity {
			f.observer.capacityChanged(index)
		}
	}
	return resp, nil
}

// snapshotData is the content of an FSM snapshot.
type snapshotData struct {
	Version   int
	Indexes   map[string]uint64
	Jobs      []*structs.Job
	Summaries []*structs.JobSummary
	Allocs    []*structs.Allocation
	Evals     []*structs.Evaluation
	Nodes     []*structs.Node
	// Added with job versions, deployments and the scheduler configuration;
	// absent from older snapshots, which decode with them empty.
	JobVersions     []*structs.Job
	Deployments     []*structs.Deployment
	SchedulerConfig *structs.SchedulerConfiguration
	// Added with deduplicated writes; absent from older snapshots.
	WriteRecords []*state.WriteRecord
	// Added with variables and the keyring; absent from older snapshots.
	Variables []*structs.VariableEncrypted
	RootKeys  []*structs.RootKey
	// Added with server clusters; absent from older snapshots.
	ClusterMeta     *structs.ClusterMetadata
	AutopilotConfig *structs.AutopilotConfig
	// Added with service registrations; absent from older snapshots.
	Services []*structs.ServiceRegistration
	// Added with namespaces; absent from older snapshots.
	Namespaces []*structs.Namespace
	// Added with node pools; absent from older snapshots.
	NodePools []*structs.NodePool
	// Added with periodic jobs; absent from older snapshots.
	PeriodicLaunches []*structs.PeriodicLaunch
	// Added with ACLs; absent from older snapshots.
	ACL *aclSnapshot
	// Added with job sources; absent from older snapshots.
	JobSubmissions []*structs.JobSubmission
}

const snapshotVersion = 1

// Snapshot returns a point-in-time snapshot of the state; raft persists it
// concurrently with later Applies.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	return &fsmSnapshot{snap: f.State().Snapshot(), handle: f.handle}, nil
}

// Restore replaces the state with a persisted snapshot. A snapshot that
// does not decode or restore (even by panicking) is an error, and the
// state stays as it was.
func (f *FSM) Restore(rc io.ReadCloser) (err error) {
	defer rc.Close()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("restore snapshot: panic: %v", r)
			f.logger.Error("snapshot not restored", "error", err, "stack", string(debug.Stack()))
		}
	}()
	var data snapshotData
	if err := codec.NewDecoder(rc, f.handle).Decode(&data); err != nil {
		return fmt.Errorf("decode snapshot: %w", err)
	}
	if data.Version != snapshotVersion {
		return fmt.Errorf("snapshot version %d is not supported (want %d)", data.Version, snapshotVersion)
	}
	st, err := state.NewStateStore()
	if err != nil {
		return err
	}
	err = st.Restore(func(r *state.Restorer) error {
		for _, j := range data.Jobs {
			if err := r.Job(j); err != nil {
				return err
			}
		}
		for _, s := range data.Summaries {
			if err := r.JobSummary(s); err != nil {
				return err
			}
		}
		for _, a := range data.Allocs {
			if err := r.Alloc(a); err != nil {
				return err
			}
		}
		for _, e := range data.Evals {
			if err := r.Eval(e); err != nil {
				return err
			}
		}
		for _, n := range data.Nodes {
			if err := r.Node(n); err != nil {
				return err
			}
		}
		for _, j := range data.JobVersions {
			if err := r.JobVersion(j); err != nil {
				return err
			}
		}
		for _, d := range data.Deployments {
			if err := r.Deployment(d); err != nil {
				return err
			}
		}
		if data.SchedulerConfig != nil {
			if err := r.SchedulerConfig(data.SchedulerConfig); err != nil {
				return err
			}
		}
		for _, rec := range data.WriteRecords {
			if err := r.WriteRecord(rec); err != nil {
				return err
			}
		}
		if err := restoreVariables(r, &data); err != nil {
			return err
		}
		if data.ClusterMeta != nil {
			if err := r.ClusterMetadata(data.ClusterMeta); err != nil {
				return err
			}
		}
		if data.AutopilotConfig != nil {
			if err := r.AutopilotConfig(data.AutopilotConfig); err != nil {
				return err
			}
		}
		for _, reg := range data.Services {
			if err := r.ServiceRegistration(reg); err != nil {
				return err
			}
		}
		for _, ns := range data.Namespaces {
			if err := r.Namespace(ns); err != nil {
				return err
			}
		}
		for _, p := range data.NodePools {
			if err := r.NodePool(p); err != nil {
				return err
			}
		}
		for _, l := range data.PeriodicLaunches {
			if err := r.PeriodicLaunch(l); err != nil {
				return err
			}
		}
		if err := restoreACL(r, data.ACL); err != nil {
			return err
		}
		for _, sub := range data.JobSubmissions {
			if err := r.JobSubmission(sub); err != nil {
				return err
			}
		}
		for table, idx := range data.Indexes {
			if err := r.Index(table, idx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	old := f.state.Swap(st)
	old.Abandon()
	if f.observer != nil {
		f.observer.clusterMetaChanged()
		f.observer.applied()
	}
	return nil
}

type fsmSnapshot struct {
	snap   *state.StateSnapshot
	handle *codec.MsgpackHandle
}

// Persist writes the snapshot to sink.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.write(sink); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("persist snapshot: %w", err)
	}
	return sink.Close()
}

func (s *fsmSnapshot) write(w io.Writer) error {
	data := snapshotData{Version: snapshotVersion}
	var err error
	if data.Indexes, err = s.snap.Indexes(); err != nil {
		return err
	}
	if data.Jobs, err = s.snap.Jobs(nil); err != nil {
		return err
	}
	if data.Summaries, err = s.snap.JobSummaries(nil); err != nil {
		return err
	}
	if data.Allocs, err = s.snap.Allocs(nil); err != nil {
		return err
	}
	if data.Evals, err = s.snap.Evals(nil); err != nil {
		return err
	}
	if data.Nodes, err = s.snap.Nodes(nil); err != nil {
		return err
	}
	if data.JobVersions, err = s.snap.AllJobVersions(nil); err != nil {
		return err
	}
	if data.Deployments, err = s.snap.Deployments(nil); err != nil {
		return err
	}
	if data.SchedulerConfig, err = s.snap.SchedulerConfig(nil); err != nil {
		return err
	}
	if data.WriteRecords, err = s.snap.WriteRecords(); err != nil {
		return err
	}
	if data.Variables, data.RootKeys, err = snapshotVariables(s.snap); err != nil {
		return err
	}
	if data.ClusterMeta, err = s.snap.ClusterMetadata(nil); err != nil {
		return err
	}
	if data.AutopilotConfig, err = s.snap.AutopilotConfig(nil); err != nil {
		return err
	}
	if data.Services, err = s.snap.ServiceRegistrations(nil, "*"); err != nil {
		return err
	}
	if data.Namespaces, err = s.snap.StoredNamespaces(); err != nil {
		return err
	}
	if data.NodePools, err = s.snap.StoredNodePools(); err != nil {
		return err
	}
	if data.PeriodicLaunches, err = s.snap.PeriodicLaunches(nil); err != nil {
		return err
	}
	if data.ACL, err = snapshotACL(s.snap); err != nil {
		return err
	}
	if data.JobSubmissions, err = s.snap.JobSubmissions(nil); err != nil {
		return err
	}
	return codec.NewEncoder(w, s.handle).Encode(&data)
}

// Release is a no-op: the snapshot holds no resources.
func (s *fsmSnapshot) Release() {}
