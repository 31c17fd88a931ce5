package state

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	bolt "go.etcd.io/bbolt"
)

func TestGroupCommitBatchesWritesQueuedDuringACommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var perTx []int
		inTx := 0
		g := &groupCommitter{update: func(fn func(*bolt.Tx) error) error {
			mu.Lock()
			inTx = 0
			mu.Unlock()
			err := fn(nil)
			mu.Lock()
			perTx = append(perTx, inTx)
			mu.Unlock()
			return err
		}}
		count := func(*bolt.Tx) error {
			mu.Lock()
			inTx++
			mu.Unlock()
			return nil
		}
		gate := make(chan struct{})
		first := make(chan error, 1)
		go func() {
			first <- g.write(func(tx *bolt.Tx) error {
				<-gate // the first commit takes long
				return count(tx)
			})
		}()
		synctest.Wait() // the first write is committing
		const n = 20
		errs := make(chan error, n)
		for range n {
			go func() { errs <- g.write(count) }()
		}
		synctest.Wait() // all n are queued behind the first commit
		close(gate)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		for range n {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if len(perTx) != 2 || perTx[0] != 1 || perTx[1] != n {
			t.Errorf("writes per transaction = %v, want [1 %d]: the lone first write at once, the queued ones together", perTx, n)
		}
		if g.leading || len(g.queue) != 0 {
			t.Errorf("after the writes: leading %v, %d queued; want idle", g.leading, len(g.queue))
		}
	})
}

func TestGroupCommitLoneWritesCommitAlone(t *testing.T) {
	calls := 0
	g := &groupCommitter{update: func(fn func(*bolt.Tx) error) error {
		calls++
		return fn(nil)
	}}
	for i := range 3 {
		if err := g.write(func(*bolt.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if calls != i+1 {
			t.Fatalf("after %d writes, %d transactions", i+1, calls)
		}
	}
}

func TestGroupCommitFailures(t *testing.T) {
	errBad := errors.New("bad value")
	errDisk := errors.New("disk full")
	cases := []struct {
		name      string
		commitErr error // every commit fails with it
		failing   map[int]bool
		want      func(i int) error
		// committed: the writes whose function ran in a committed
		// transaction (each exactly once there).
		committed map[int]bool
	}{
		{
			name:      "one function fails: it alone gets its error",
			failing:   map[int]bool{2: true},
			want:      func(i int) error { return map[bool]error{true: errBad}[i == 2] },
			committed: map[int]bool{0: true, 1: true, 3: true, 4: true},
		},
		{
			name:      "two functions fail",
			failing:   map[int]bool{1: true, 4: true},
			want:      func(i int) error { return map[bool]error{true: errBad}[i == 1 || i == 4] },
			committed: map[int]bool{0: true, 2: true, 3: true},
		},
		{
			name:      "the commit fails: every write gets its error",
			commitErr: errDisk,
			want:      func(int) error { return errDisk },
			committed: map[int]bool{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var ranInTx []int // function indexes of the current transaction
				committedRuns := map[int]int{}
				g := &groupCommitter{update: func(fn func(*bolt.Tx) error) error {
					mu.Lock()
					ranInTx = nil
					mu.Unlock()
					if err := fn(nil); err != nil {
						return err
					}
					if tc.commitErr != nil {
						return tc.commitErr
					}
					mu.Lock()
					for _, i := range ranInTx {
						committedRuns[i]++
					}
					mu.Unlock()
					return nil
				}}
				fnOf := func(i int) func(*bolt.Tx) error {
					return func(*bolt.Tx) error {
						mu.Lock()
						ranInTx = append(ranInTx, i)
						mu.Unlock()
						if tc.failing[i] {
							return errBad
						}
						return nil
					}
				}
				gate := make(chan struct{})
				blocker := make(chan error, 1)
				go func() {
					blocker <- g.write(func(*bolt.Tx) error { <-gate; return nil })
				}()
				synctest.Wait()
				const n = 5
				errs := make([]chan error, n)
				for i := range n {
					errs[i] = make(chan error, 1)
					go func() { errs[i] <- g.write(fnOf(i)) }()
					synctest.Wait() // queued in order
				}
				close(gate)
				<-blocker
				for i := range n {
					if err := <-errs[i]; !errors.Is(err, tc.want(i)) || (err == nil) != (tc.want(i) == nil) {
						t.Errorf("write %d: error %v, want %v", i, err, tc.want(i))
					}
				}
				for i := range n {
					if want := map[bool]int{true: 1}[tc.committed[i]]; committedRuns[i] != want {
						t.Errorf("write %d committed %d times, want %d", i, committedRuns[i], want)
					}
				}
			})
		})
	}
}

// TestGroupCommitConcurrentPuts writes from many goroutines through a real
// file (run it with -race): every Put returns nil and is read back.
func TestGroupCommitConcurrentPuts(t *testing.T) {
	db, err := NewBoltStateDB(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			ts := testTaskState()
			ts.Restarts = uint64(i)
			if err := db.PutTaskState(fmt.Sprintf("alloc-%d", i%10), fmt.Sprintf("task-%d", i), ts); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range 50 {
		_, ts, err := db.GetTaskRunnerState(fmt.Sprintf("alloc-%d", i%10), fmt.Sprintf("task-%d", i))
		if err != nil || ts == nil || ts.Restarts != uint64(i) {
			t.Errorf("task %d: state %+v, %v", i, ts, err)
		}
	}
}
