package server

import (
	"bytes"
	"fmt"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// A deduplicated write (rpcapi.Deduplicated: JobRegister, JobDeregister,
// JobRevert, AllocStop, SchedulerSetConfig) whose request carries a
// request ID is applied once for that ID: its raft command is wrapped in a
// WriteOnceCommand, which the FSM applies only if no write with the ID was
// applied before, recording it (state.WriteRecord) in the same
// transaction. A repeat (a caller's retry after a timeout, or a lost
// connection) is answered with the first write's reply, completed from its
// record, and changes nothing. The records are part of the replicated
// state, so they hold across a leader's restart; they are kept for
// writeRecordTTL, at most maxWriteRecords of them.
const (
	// writeRecordTTL is how long a write's record is kept: far longer
	// than a caller retries one call (rpcclient: 3 rounds of a 30s call
	// timeout, with backoff).
	writeRecordTTL = 10 * time.Minute
	// maxWriteRecords bounds the records kept, oldest dropped first.
	maxWriteRecords = 1 << 16
	// maxRequestIDLen bounds a request ID (a UUID is 36 bytes), and so
	// the size of the records.
	maxRequestIDLen = 128
)

// completeFunc completes a deduplicated write's reply with what applying
// it decided: its raft index, and what the FSM answered besides success.
type completeFunc[R any] func(r *R, index uint64, result any)

// replayed returns the reply of the write with request ID id when the
// server applied one already (ok); a method calls it first, so that a
// repeat is answered so before anything is checked against the state the
// first write changed.
func replayed[R any](s *Server, id string, complete completeFunc[R]) (r *R, ok bool, err error) {
	if id == "" {
		return nil, false, nil
	}
	if len(id) > maxRequestIDLen {
		return nil, false, structs.Invalid("request ID is %d bytes long: at most %d (a UUID)", len(id), maxRequestIDLen)
	}
	rec, err := s.fsm.State().WriteRecordByID(id)
	if err != nil || rec == nil {
		return nil, false, err
	}
	r, err = replyOf(s, rec, complete)
	return r, true, err
}

// applyWrite commits cmd, a command of type t, for a deduplicated write
// with request ID id, and returns reply completed from the commit. With an
// ID, the command is applied only if no write with the ID was, and the
// reply is the first write's.
func applyWrite[R any](s *Server, id string, t MessageType, cmd any, reply *R, complete completeFunc[R]) (*R, error) {
	if id == "" {
		index, result, err := s.raftApply(t, cmd)
		if err != nil {
			return nil, err
		}
		complete(reply, index, result)
		return reply, nil
	}
	if len(id) > maxRequestIDLen {
		return nil, structs.Invalid("request ID is %d bytes long: at most %d (a UUID)", len(id), maxRequestIDLen)
	}
	// The wrapped command passes the checks of any proposal (storable).
	entry, err := s.fsm.proposal(t, cmd)
	if err != nil {
		return nil, err
	}
	tmpl, err := encodeMsgpack(s.fsm.handle, reply)
	if err != nil {
		return nil, fmt.Errorf("encode %s reply: %w", t, err)
	}
	_, out, err := s.raftApply(WriteOnceRequestType, &WriteOnceCommand{
		RequestID: id, Time: s.clock.Now().UnixNano(), ReplyType: replyType[R](), Reply: tmpl, Type: t, Body: entry[1:],
	})
	if err != nil {
		return nil, err
	}
	rec, ok := out.(*state.WriteRecord)
	if !ok {
		return nil, fmt.Errorf("apply %s for request %q: the FSM answered %T, not a write record", t, id, out)
	}
	return replyOf(s, rec, complete)
}

// replyOf returns the reply of the write rec records.
func replyOf[R any](s *Server, rec *state.WriteRecord, complete completeFunc[R]) (*R, error) {
	if want := replyType[R](); rec.ReplyType != want {
		return nil, structs.NewError(structs.KindConflict,
			"request ID %q was used by another write (%s, not %s): give each write its own request ID", rec.ID, rec.ReplyType, want)
	}
	var r R
	if err := decodeBody(s.fsm.handle, rec.Reply, &r); err != nil {
		return nil, fmt.Errorf("decode the reply of request %q: %w", rec.ID, err)
	}
	complete(&r, rec.Index, rec.Result)
	return &r, nil
}

// replyType names R for WriteRecord.ReplyType.
func replyType[R any]() string { return fmt.Sprintf("%T", (*R)(nil)) }

func encodeMsgpack(h *codec.MsgpackHandle, v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := codec.NewEncoder(&buf, h).Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
