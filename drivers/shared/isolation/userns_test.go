package isolation

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestNewUserNS(t *testing.T) {
	for _, tc := range []struct {
		name             string
		uid, gid         uint32
		groups           []uint32
		wantUIDs, wantGI []IDMap
	}{
		{"nobody", 65534, 65534, nil, []IDMap{{65534, 65534}}, []IDMap{{65534, 65534}}},
		{"user with groups", 1000, 1000, []uint32{27, 1000, 44}, []IDMap{{1000, 1000}},
			[]IDMap{{1000, 1000}, {27, 27}, {44, 44}}},
		{"root is nobody on the host", 0, 0, []uint32{0}, []IDMap{{0, 65534}}, []IDMap{{0, 65534}}},
		// A group that is nobody's on the host already cannot be mapped
		// twice.
		{"root in nogroup", 0, 0, []uint32{65534}, []IDMap{{0, 65534}}, []IDMap{{0, 65534}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := NewUserNS(tc.uid, tc.gid, tc.groups, 65534, 65534)
			if !reflect.DeepEqual(ns.UIDs, tc.wantUIDs) || !reflect.DeepEqual(ns.GIDs, tc.wantGI) {
				t.Errorf("NewUserNS = %+v %+v, want %+v %+v", ns.UIDs, ns.GIDs, tc.wantUIDs, tc.wantGI)
			}
		})
	}
	// A mapping to the host's root is refused.
	s := &Spec{Path: "x", RootDir: "/r", UID: 0, UserNS: NewUserNS(0, 0, nil, 0, 0)}
	if err := s.validate(); err == nil || !strings.Contains(err.Error(), "host's root") {
		t.Errorf("validate a map to host root: %v", err)
	}
	s = &Spec{Path: "x", RootDir: "/r", UID: 5, UserNS: NewUserNS(6, 6, nil, 65534, 65534)}
	if err := s.validate(); err == nil || !strings.Contains(err.Error(), "uid 5 is not mapped") {
		t.Errorf("validate an unmapped uid: %v", err)
	}
}

// TestUserNamespace runs tasks in a user namespace: the task's uid_map
// shows only its own user (root in the task maps to nobody on the host),
// it holds no capability, and root in the task cannot write a host file
// that only the host's root may write, bound into its root read-write.
// Without the namespace (the control case), root in the task can.
func TestUserNamespace(t *testing.T) {
	layout := needIsolation(t)
	if err := UserNamespaces(); err != nil {
		t.Skipf("no user namespaces on this kernel: %v", err)
	}
	hostFile := filepath.Join(t.TempDir(), "rootonly")
	if err := os.WriteFile(hostFile, []byte("host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	uid, gid, groups, err := LookupUser(DefaultUser)
	if err != nil {
		t.Fatal(err)
	}
	const script = `tr -s ' \t' ' ' < /proc/self/uid_map; echo; id -u; grep CapEff /proc/self/status;
echo fds $(ls /proc/$$/fd | tr "\n" " "); echo task > /hostfile && echo wrote-host-file; echo task > /tmp/own && echo wrote-own-file; cat /hostfile`
	bindHostFile := func(s *Spec) {
		s.Mounts = append(s.Mounts, Mount{Source: hostFile, Target: "/hostfile"})
	}
	for _, tc := range []struct {
		name    string
		mutate  func(*Spec)
		want    []string
		notWant []string
	}{
		{"nobody", func(s *Spec) {
			s.UserNS = NewUserNS(uid, gid, groups, uid, gid)
		}, []string{" 65534 65534 1", "\n65534\n", "CapEff:\t0000000000000000", "wrote-own-file", "host\n"}, []string{"wrote-host-file"}},
		{"root", func(s *Spec) {
			s.UID, s.GID, s.Groups = 0, 0, nil
			s.UserNS = NewUserNS(0, 0, nil, uid, gid)
		}, []string{" 0 65534 1", "\n0\n", "wrote-own-file", "host\n"}, []string{"wrote-host-file"}},
		{"root without a user namespace", func(s *Spec) {
			s.UID, s.GID, s.Groups = 0, 0, nil
		}, []string{" 0 0 4294967295", "wrote-host-file", "task\n"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(hostFile, []byte("host\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			out, ws, _ := runIsolated(t, layout, Resources{}, script, bindHostFile, tc.mutate)
			if !ws.Exited() {
				t.Fatalf("task did not exit: %v\n%s", ws, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
			if testing.Verbose() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}

// TestProbeUserNS: where the kernel offers user namespaces, the init
// stage starts in one, as root there and nobody on the host.
func TestProbeUserNS(t *testing.T) {
	needIsolation(t)
	if err := UserNamespaces(); err != nil {
		t.Skipf("no user namespaces on this kernel: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ProbeUserNS(ctx, testInit(t)); err != nil {
		t.Fatal(err)
	}
}
