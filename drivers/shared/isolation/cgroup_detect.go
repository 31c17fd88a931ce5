package isolation

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Cgroup versions.
const (
	CgroupV1 = 1
	CgroupV2 = 2
)

// v1Controllers are the v1 controllers a task cgroup joins; cpuset only
// when a cpuset is asked for.
var v1Controllers = []string{"memory", "cpu", "cpuacct", "pids", "freezer"}

// v2Controllers are the controllers the unified hierarchy must offer.
var v2Controllers = []string{"memory", "cpu", "pids"}

// CgroupLayout says where the cgroup hierarchies are mounted.
type CgroupLayout struct {
	// Version is CgroupV1 or CgroupV2.
	Version int
	// Root is the unified hierarchy's mount point (v2).
	Root string
	// Controllers maps each v1 controller to its hierarchy's mount point;
	// controllers mounted together ("cpu,cpuacct") share one.
	Controllers map[string]string
}

// DetectCgroups returns the cgroup layout of this host: v2 when the
// unified hierarchy has the memory, cpu and pids controllers, else v1 when
// memory, cpu, cpuacct, pids and freezer are mounted. It fails with a
// message fit for a fingerprint when neither is usable.
func DetectCgroups() (*CgroupLayout, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("detect cgroups: %w", err)
	}
	defer f.Close()
	mounts, err := parseMountinfo(f)
	if err != nil {
		return nil, fmt.Errorf("detect cgroups: %w", err)
	}
	return layoutFromMounts(mounts, os.ReadFile)
}

// cgroupMount is a cgroup or cgroup2 mount from mountinfo.
type cgroupMount struct {
	Point   string
	FSType  string   // "cgroup" or "cgroup2"
	Options []string // super options, e.g. "rw", "cpu", "cpuacct"
}

// parseMountinfo returns the cgroup mounts listed in a mountinfo file.
// Each line is "id parent major:minor root point options [optional...] -
// fstype source superoptions".
func parseMountinfo(r io.Reader) ([]cgroupMount, error) {
	var out []cgroupMount
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if sep < 5 || len(fields) < sep+4 {
			continue
		}
		fstype := fields[sep+1]
		if fstype != "cgroup" && fstype != "cgroup2" {
			continue
		}
		out = append(out, cgroupMount{
			Point:   unescapeMountPath(fields[4]),
			FSType:  fstype,
			Options: strings.Split(fields[sep+3], ","),
		})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	return out, nil
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v byte
			ok := true
			for _, c := range []byte(s[i+1 : i+4]) {
				if c < '0' || c > '7' {
					ok = false
					break
				}
				v = v*8 + (c - '0')
			}
			if ok {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// layoutFromMounts picks the layout from the cgroup mounts; readFile reads
// a v2 hierarchy's cgroup.controllers.
func layoutFromMounts(mounts []cgroupMount, readFile func(string) ([]byte, error)) (*CgroupLayout, error) {
	var v2Problem error
	for _, m := range mounts {
		if m.FSType != "cgroup2" {
			continue
		}
		b, err := readFile(filepath.Join(m.Point, "cgroup.controllers"))
		if err != nil {
			v2Problem = fmt.Errorf("cgroup2 at %s: %w", m.Point, err)
			continue
		}
		have := strings.Fields(string(b))
		var missing []string
		for _, c := range v2Controllers {
			if !slices.Contains(have, c) {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			v2Problem = fmt.Errorf("cgroup2 at %s lacks the %s controller(s)", m.Point, strings.Join(missing, ", "))
			continue
		}
		return &CgroupLayout{Version: CgroupV2, Root: m.Point}, nil
	}

	ctrl := make(map[string]string)
	for _, m := range mounts {
		if m.FSType != "cgroup" {
			continue
		}
		for _, o := range m.Options {
			if _, seen := ctrl[o]; !seen && (slices.Contains(v1Controllers, o) || o == "cpuset") {
				ctrl[o] = m.Point
			}
		}
	}
	var missing []string
	for _, c := range v1Controllers {
		if ctrl[c] == "" {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return &CgroupLayout{Version: CgroupV1, Controllers: ctrl}, nil
	}
	msg := fmt.Sprintf("no usable cgroups: v1 lacks the %s controller(s)", strings.Join(missing, ", "))
	if v2Problem != nil {
		msg += "; " + v2Problem.Error()
	}
	return nil, errors.New(msg)
}
