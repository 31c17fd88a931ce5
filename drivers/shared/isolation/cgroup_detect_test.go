package isolation

import (
	"os"
	"strings"
	"testing"
)

const hybridMountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

const unifiedMountinfo = `22 1 0:20 / /proc rw - proc proc rw
30 23 0:27 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
`

func TestLayoutFromMounts(t *testing.T) {
	files := map[string]string{
		"/sys/fs/cgroup/unified/cgroup.controllers": "",
		"/sys/fs/cgroup/cgroup.controllers":         "cpuset cpu io memory hugetlb pids rdma misc",
	}
	readFile := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	cases := []struct {
		name      string
		mountinfo string
		want      *CgroupLayout
		wantErr   string
	}{
		{
			name:      "hybrid uses v1",
			mountinfo: hybridMountinfo,
			want: &CgroupLayout{Version: CgroupV1, Controllers: map[string]string{
				"cpu": "/sys/fs/cgroup/cpu,cpuacct", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct", "cpuset": "/sys/fs/cgroup/cpuset",
				"memory": "/sys/fs/cgroup/memory", "freezer": "/sys/fs/cgroup/freezer", "pids": "/sys/fs/cgroup/pids",
			}},
		},
		{name: "unified", mountinfo: unifiedMountinfo, want: &CgroupLayout{Version: CgroupV2, Root: "/sys/fs/cgroup"}},
		{name: "none", mountinfo: "22 1 0:20 / /proc rw - proc proc rw\n", wantErr: "no usable cgroups"},
		{
			name:      "v1 without pids, v2 without controllers",
			mountinfo: strings.ReplaceAll(hybridMountinfo, "rw,pids", "rw"),
			wantErr:   "lacks the pids controller(s); cgroup2 at /sys/fs/cgroup/unified lacks the memory, cpu, pids controller(s)",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mounts, err := parseMountinfo(strings.NewReader(tc.mountinfo))
			if err != nil {
				t.Fatal(err)
			}
			got, err := layoutFromMounts(mounts, readFile)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != tc.want.Version || got.Root != tc.want.Root || len(got.Controllers) != len(tc.want.Controllers) {
				t.Fatalf("layout %+v, want %+v", got, tc.want)
			}
			for k, v := range tc.want.Controllers {
				if got.Controllers[k] != v {
					t.Errorf("controller %s at %q, want %q", k, got.Controllers[k], v)
				}
			}
		})
	}
	if got := unescapeMountPath(`/mnt/a\040b`); got != "/mnt/a b" {
		t.Errorf("unescape = %q", got)
	}
}
