package state

import (
	"fmt"
	"testing"
	"time"
)

// TestWriteRecordRetention: records are kept in the order they were made,
// and the oldest are dropped once older than the retention or beyond the
// count limit.
func TestWriteRecordRetention(t *testing.T) {
	const maxAge, maxCount = 10 * time.Minute, 3
	at := func(m int) int64 { return int64(time.Duration(m) * time.Minute) }
	tests := []struct {
		name  string
		times []int64 // of the records, in the order they are made (minutes)
		kept  []string
	}{
		{"all young, under the limit", []int64{at(0), at(1), at(2)}, []string{"r0", "r1", "r2"}},
		{"beyond the count limit", []int64{at(0), at(1), at(2), at(3), at(4)}, []string{"r2", "r3", "r4"}},
		{"older than the retention", []int64{at(0), at(5), at(12)}, []string{"r1", "r2"}},
		{"all expired but the last", []int64{at(0), at(1), at(30)}, []string{"r2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			for i, tm := range tt.times {
				rec := &WriteRecord{ID: fmt.Sprintf("r%d", i), Index: uint64(i + 1), Time: tm, ReplyType: "x"}
				if err := s.Batch(uint64(i+1), func(w *WriteTxn) error { return w.RecordWrite(rec, maxAge, maxCount) }); err != nil {
					t.Fatal(err)
				}
			}
			recs, err := s.WriteRecords()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, r.ID)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.kept) {
				t.Errorf("kept %v, want %v", got, tt.kept)
			}
			for _, id := range tt.kept {
				if r, err := s.WriteRecordByID(id); err != nil || r == nil {
					t.Errorf("WriteRecordByID(%s) = %v, %v", id, r, err)
				}
			}
			if s.Index(TableWriteRecords) != uint64(len(tt.times)) {
				t.Errorf("table index = %d", s.Index(TableWriteRecords))
			}
		})
	}
}
