package shim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/version"
)

// Binary is the name of the small binary that runs shims: this package
// and what it imports, and none of the agent, so that each idle shim costs
// about a third of the memory of the drover binary re-executed (every
// package's initialisation runs in every process; see docs/decisions.md
// and docs/performance.md). It is installed beside drover; `make build`
// builds both into bin/.
const Binary = "drover-shim"

// identityTimeout bounds asking a shim binary for its Identity.
const identityTimeout = 5 * time.Second

// Command returns the executable and leading arguments that start a shim:
// Binary beside the running executable when it reports the same Identity
// as this process (it was built from the same source), else the running
// executable itself (the drover binary), with [Subcommand] either way.
// It asks Binary at every call, so that binaries replaced by an upgrade
// under a running agent are never mixed.
func Command() (string, []string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("find drover executable for the shim: %w", err)
	}
	return commandBeside(exe), []string{Subcommand}, nil
}

// Resolver finds the shim binary as Command does, and remembers the answer
// while the file at Binary's path stays the same one (device, inode, size,
// modification and change times) and the running executable's path does
// not change: a caller that starts many processes from it (the exec
// driver: an init stage for every exec session) asks Binary for its
// Identity once, not at every start, which would cost a process start
// each. A binary replaced by an upgrade is asked again at the next call.
// The zero Resolver is ready to use; it is safe for concurrent use (calls
// wait for one another while Binary is asked).
type Resolver struct {
	mu  sync.Mutex // guards the fields below
	key binaryKey  // the files bin was found for
	bin string     // "" until the first call
}

// binaryKey names the files a Resolver's answer was found for.
type binaryKey struct {
	exe string
	bin fileID
}

// fileID tells one version of a file from another; the zero fileID is a
// file that could not be read.
type fileID struct {
	dev, ino     uint64
	size         int64
	mtime, ctime syscall.Timespec
}

func statFile(path string) fileID {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return fileID{}
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtim, ctime: st.Ctim}
}

// Command returns what Command does, found once per version of Binary.
func (r *Resolver) Command() (string, []string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("find drover executable for the shim: %w", err)
	}
	return r.beside(exe), []string{Subcommand}, nil
}

// InitCommand returns how to run the isolation init stage from the same
// binary Command names (drover-shim, whose start costs a fraction of the
// drover binary's, or else drover).
func (r *Resolver) InitCommand() (isolation.InitCommand, error) {
	exe, err := os.Executable()
	if err != nil {
		return isolation.InitCommand{}, fmt.Errorf("find drover executable for the isolation init stage: %w", err)
	}
	return isolation.InitCommand{Path: r.beside(exe), Args: []string{isolation.InitArg}}, nil
}

// beside is commandBeside(exe), remembered per version of Binary. The
// file is looked at before it is asked: one replaced in between is
// asked again at the next call.
func (r *Resolver) beside(exe string) string {
	key := binaryKey{exe: exe, bin: statFile(filepath.Join(filepath.Dir(exe), Binary))}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bin == "" || r.key != key {
		r.bin, r.key = commandBeside(exe), key
	}
	return r.bin
}

// commandBeside returns Binary beside exe if it reports this Identity,
// else exe.
func commandBeside(exe string) string {
	small := filepath.Join(filepath.Dir(exe), Binary)
	if small != exe && sameIdentity(small) {
		return small
	}
	return exe
}

// sameIdentity reports whether bin exists and reports this process's
// Identity.
func sameIdentity(bin string) bool {
	if fi, err := os.Stat(bin); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), identityTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, Subcommand, "-identity")
	cmd.Dir = "/"
	out, err := cmd.Output()
	return err == nil && strings.TrimSpace(string(out)) == Identity()
}

// Identity names what an agent and a shim binary must agree on: drover's
// version, the versions of the socket protocol, of State and of the exit
// file, the source revision when the binary knows it, and a digest of the
// Go types that cross between them (Spec, State, the socket's messages, the init stage's EnterSpec),
// so that a shim binary whose wire types differ is never used even where
// a version was not bumped.
func Identity() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s protocol=%d state=%d exit=%d", Binary, version.Version, protocolVersion, StateVersion, exitFileVersion)
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				fmt.Fprintf(&b, " %s=%s", s.Key, s.Value)
			}
		}
	}
	sum := sha256.Sum256([]byte(wireTypes()))
	fmt.Fprintf(&b, " types=%s", hex.EncodeToString(sum[:8]))
	return b.String()
}

// wireTypes describes the types that cross between agent and shim: every
// field's name, type and tag, recursively through this module's types.
func wireTypes() string {
	var b strings.Builder
	seen := map[reflect.Type]bool{}
	var describe func(t reflect.Type)
	describe = func(t reflect.Type) {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			b.WriteString(t.Kind().String() + " ")
			describe(t.Elem())
			return
		case reflect.Map:
			b.WriteString("map ")
			describe(t.Key())
			describe(t.Elem())
			return
		case reflect.Struct:
		default:
			b.WriteString(t.String() + ";")
			return
		}
		if !strings.HasPrefix(t.PkgPath(), "github.com/drover-io/drover/") || seen[t] {
			b.WriteString(t.String() + ";")
			return
		}
		seen[t] = true
		b.WriteString(t.String() + "{")
		for i := range t.NumField() {
			f := t.Field(i)
			fmt.Fprintf(&b, "%s `%s` ", f.Name, f.Tag)
			describe(f.Type)
		}
		b.WriteString("}")
	}
	// EnterSpec: the exec driver runs the init stage's enter mode from
	// the binary Resolver finds.
	for _, v := range []any{Spec{}, State{}, readyMsg{}, request{}, response{}, isolation.EnterSpec{}} {
		describe(reflect.TypeOf(v))
	}
	return b.String()
}
