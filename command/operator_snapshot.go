package command

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/server/snapshot"
)

func runOperatorSnapshotSave(m *Meta, args []string) int {
	fset := m.apiFlagSet("operator snapshot save", "[options] <file>", `
Save the cluster state (jobs, allocations, evaluations, nodes, deployments,
the scheduler and autopilot configurations) to an archive file, which
operator snapshot restore reads back. The archive is checked before it
replaces <file>.`)
	stale := fset.Bool("stale", false, "Let any server answer from its own state, rather than the leader (works without a leader; may miss the latest writes).")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give the file to write the snapshot to")
	}
	path := fset.Arg(0)
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	rc, err := c.Operator().Snapshot(&api.QueryOptions{AllowStale: *stale})
	if err != nil {
		return m.fail("saving the snapshot", err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return m.fail("reading the snapshot", err)
	}
	meta, _, err := snapshot.Read(bytes.NewReader(data))
	if err != nil {
		return m.fail("checking the snapshot the server sent", err)
	}
	if err := writeFileAtomic(path, data); err != nil {
		return m.fail("writing the snapshot", err)
	}
	fmt.Fprintf(m.stdout, "State file written to %s (index %d, %d jobs, %d allocations, %d nodes)\n",
		path, meta.Index, meta.Jobs, meta.Allocations, meta.Nodes)
	return exitOK
}

// writeFileAtomic writes data to path whole, or leaves path as it was.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
	}
	return werr
}

func runOperatorSnapshotRestore(m *Meta, args []string) int {
	fset := m.apiFlagSet("operator snapshot restore", "[options] <file>", `
Replace the cluster state with a snapshot archive's (from operator snapshot
save): every server installs it. Writes made since the snapshot are lost.
A damaged archive is refused and changes nothing.`)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give the snapshot file to restore")
	}
	data, err := m.readFile(fset.Arg(0))
	if err != nil {
		return m.fail("reading the snapshot file", err)
	}
	if _, _, err := snapshot.Read(bytes.NewReader(data)); err != nil {
		return m.fail("checking the snapshot file", err)
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	if _, err := c.Operator().SnapshotRestore(bytes.NewReader(data), nil); err != nil {
		return m.fail("restoring the snapshot", err)
	}
	fmt.Fprintln(m.stdout, "Snapshot Restored")
	return exitOK
}

func runOperatorSnapshotInspect(m *Meta, args []string) int {
	fset := m.flagSet("operator snapshot inspect", "<file>", `
Describe a snapshot archive without a server: its ID, raft index and term,
size, the cluster it comes from and what it holds. A damaged archive is an
error that says what is wrong.`)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "give the snapshot file to inspect")
	}
	data, err := m.readFile(fset.Arg(0))
	if err != nil {
		return m.fail("reading the snapshot file", err)
	}
	meta, _, err := snapshot.Read(bytes.NewReader(data))
	if err != nil {
		if errors.Is(err, snapshot.ErrCorrupt) || errors.Is(err, snapshot.ErrVersion) {
			fmt.Fprintf(m.stderr, "Error: %s: %v\n", fset.Arg(0), err)
			return exitError
		}
		return m.fail("inspecting the snapshot", err)
	}
	fmt.Fprint(m.stdout, formatKV([]kv{
		{"ID", meta.ID},
		{"Size", strconv.FormatInt(meta.Size, 10)},
		{"Index", strconv.FormatUint(meta.Index, 10)},
		{"Term", strconv.FormatUint(meta.Term, 10)},
		{"Version", strconv.Itoa(meta.Version)},
		{"Cluster ID", meta.ClusterID},
		{"Created", formatTime(meta.Created)},
		{"Jobs", strconv.Itoa(meta.Jobs)},
		{"Allocations", strconv.Itoa(meta.Allocations)},
		{"Evaluations", strconv.Itoa(meta.Evaluations)},
		{"Nodes", strconv.Itoa(meta.Nodes)},
		{"Deployments", strconv.Itoa(meta.Deployments)},
	}))
	return exitOK
}
