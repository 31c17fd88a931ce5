package state

import (
	"fmt"
	"time"

	memdb "github.com/hashicorp/go-memdb"
)

// TableWriteRecords holds the WriteRecords of deduplicated writes.
const TableWriteRecords = "write_records"

// WriteRecord is what the server remembers of a deduplicated write (one
// whose request carried a request ID), so that a repeat of the request is
// answered with the first reply and applied no more. Records are
// replicated with the rest of the state (raft log and snapshots), so they
// hold across a leader's restart; they are dropped oldest first once older
// than the retention or beyond the count limit (RecordWrite).
type WriteRecord struct {
	// ID is the request ID.
	ID string
	// Seq numbers records in the order they were made (1, 2, ...).
	Seq uint64
	// Index is the raft index at which the write was applied.
	Index uint64
	// Time is the leader's clock when it proposed the write (Unix
	// nanoseconds): the record's age counts from it.
	Time int64
	// ReplyType names the Go type of the reply (the method's), so that
	// an ID reused for another method is told apart.
	ReplyType string
	// Reply is the method's reply as known before the write was applied,
	// msgpack-encoded; the server completes it with Index and Result.
	Reply []byte
	// Result is what applying the write answered besides success (a
	// compare-and-set's outcome), nil for most writes.
	Result any
}

func writeRecordsSchema() *memdb.TableSchema {
	return &memdb.TableSchema{Name: TableWriteRecords, Indexes: map[string]*memdb.IndexSchema{
		"id":  stringIndex("id", "ID", true, false),
		"seq": {Name: "seq", Unique: true, Indexer: &memdb.UintFieldIndex{Field: "Seq"}},
	}}
}

// WriteRecordByID returns the record of the write with request ID id, nil
// when there is none.
func (r *reader) WriteRecordByID(id string) (*WriteRecord, error) {
	return first[*WriteRecord](r, nil, TableWriteRecords, "id", id)
}

// WriteRecords returns every record, oldest first.
func (r *reader) WriteRecords() ([]*WriteRecord, error) {
	return get[*WriteRecord](r, nil, TableWriteRecords, "seq")
}

// RecordWrite stores rec (owned by the store from now on) with the next
// sequence number, then drops the oldest records while they are older than
// maxAge (before rec.Time) or more than maxCount (at least 1) are kept.
func (w *WriteTxn) RecordWrite(rec *WriteRecord, maxAge time.Duration, maxCount int) error {
	maxCount = max(maxCount, 1)
	last, err := w.txn.Last(TableWriteRecords, "seq")
	if err != nil {
		return fmt.Errorf("read last write record: %w", err)
	}
	rec.Seq = 1
	if last != nil {
		rec.Seq = last.(*WriteRecord).Seq + 1
	}
	if err := w.txn.Insert(TableWriteRecords, rec); err != nil {
		return fmt.Errorf("record write %q: %w", rec.ID, err)
	}
	w.markTable(TableWriteRecords)
	cutoff := rec.Time - maxAge.Nanoseconds()
	for {
		raw, err := w.txn.First(TableWriteRecords, "seq")
		if err != nil {
			return fmt.Errorf("read oldest write record: %w", err)
		}
		oldest := raw.(*WriteRecord) // rec at least is there
		if oldest.Time >= cutoff && rec.Seq-oldest.Seq < uint64(maxCount) {
			return nil
		}
		if err := w.txn.Delete(TableWriteRecords, oldest); err != nil {
			return fmt.Errorf("drop write record %q: %w", oldest.ID, err)
		}
	}
}

// WriteRecord restores a record.
func (r *Restorer) WriteRecord(rec *WriteRecord) error { return r.insert(TableWriteRecords, rec) }
