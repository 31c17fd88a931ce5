package server

import (
	"fmt"
	"testing"

	"github.com/drover-io/drover/structs"
)

// planResult1000 is the plan result command of a 1,000-allocation job.
func planResult1000() *PlanResultCommand {
	job := testJob("bench", 1000, 100, 100)
	job.Canonicalize()
	cmd := &PlanResultCommand{}
	for i := range 1000 {
		a := planAlloc(fmt.Sprintf("alloc-%04d", i), fmt.Sprintf("node-%02d", i%50), job, 100)
		a.Name = structs.AllocName(job.ID, "web", i)
		cmd.Allocs = append(cmd.Allocs, a)
	}
	return cmd
}

// BenchmarkProposal measures what raftApply would spend before raft sees
// a 1,000-allocation plan result: encoding alone (what FSM.proposal does
// for plan results) and encoding plus the decode that proves an entry
// reads back (storable, what every other command gets).
func BenchmarkProposal(b *testing.B) {
	cmd := planResult1000()
	h := newMsgpackHandle()
	check := newMsgpackHandleDepth(proposalDepth)
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodeCommand(h, ApplyPlanResultsRequestType, cmd); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode+decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := storable(h, check, ApplyPlanResultsRequestType, cmd); err != nil {
				b.Fatal(err)
			}
		}
	})
}
