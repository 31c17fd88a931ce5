package client

import (
	"strings"
	"testing"
	"time"
)

func TestFingerprintHost(t *testing.T) {
	cpuinfo := "processor\t: 0\nmodel name\t: Test CPU\ncpu MHz\t\t: 2400.000\n\nprocessor\t: 1\nmodel name\t: Test CPU\ncpu MHz\t\t: 2000.000\n"
	meminfo := "MemTotal:       16384000 kB\nMemFree:         1000 kB\n"
	osrel := "NAME=\"Ubuntu\"\nID=ubuntu\nVERSION_ID=\"22.04\"\n"
	tests := []struct {
		name      string
		src       hostSources
		wantAttrs map[string]string
		wantMHz   int64
		wantCores uint16
		wantMemMB int64
	}{
		{
			name: "full linux host",
			src: hostSources{CPUInfo: strings.NewReader(cpuinfo), MemInfo: strings.NewReader(meminfo), OSRelease: strings.NewReader(osrel),
				KernelName: "linux", KernelRelease: "6.1.0-18-amd64\n", Arch: "amd64", Hostname: "box", Version: "0.1.0",
				DiskTotal: 100 << 20, DiskFree: 50 << 20},
			wantAttrs: map[string]string{
				"cpu.arch": "amd64", "cpu.numcores": "2", "cpu.frequency": "2400", "cpu.totalcompute": "4800", "cpu.modelname": "Test CPU",
				"memory.totalbytes": "16777216000", "kernel.name": "linux", "kernel.version": "6.1.0-18-amd64",
				"os.name": "ubuntu", "os.version": "22.04", "unique.hostname": "box", "drover.version": "0.1.0",
				"unique.storage.bytestotal": "104857600", "unique.storage.bytesfree": "52428800",
			},
			wantMHz: 4800, wantCores: 2, wantMemMB: 16000,
		},
		{
			name:      "no MHz in cpuinfo: cpufreq",
			src:       hostSources{CPUInfo: strings.NewReader("processor : 0\nprocessor : 1\nprocessor : 2\n"), CPUMaxFreqKHz: "3000000\n"},
			wantAttrs: map[string]string{"cpu.numcores": "3", "cpu.totalcompute": "9000"},
			wantMHz:   9000, wantCores: 3,
		},
		{
			name:      "nothing readable: NumCPU and default MHz",
			src:       hostSources{NumCPU: 4},
			wantAttrs: map[string]string{"cpu.numcores": "4", "cpu.totalcompute": "4000"},
			wantMHz:   4000, wantCores: 4,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fp, err := fingerprintHost(tc.src, FingerprintConfig{})
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.wantAttrs {
				if fp.Attributes[k] != v {
					t.Errorf("%s = %q, want %q", k, fp.Attributes[k], v)
				}
			}
			if fp.Resources.Cpu.CpuShares != tc.wantMHz || fp.Resources.Cpu.TotalCpuCores != tc.wantCores || fp.Resources.Memory.MemoryMB != tc.wantMemMB {
				t.Errorf("resources = %+v", fp.Resources)
			}
		})
	}
}

func TestDiffAllocs(t *testing.T) {
	known := map[string]uint64{"a": 5, "b": 5, "c": 5}
	server := map[string]uint64{"a": 5, "b": 7, "d": 9}
	d := diffAllocs(known, server)
	if len(d.added) != 1 || d.added[0] != "d" || len(d.updated) != 1 || d.updated[0] != "b" || len(d.removed) != 1 || d.removed[0] != "c" {
		t.Errorf("diff = %+v", d)
	}
	if d := diffAllocs(nil, nil); len(d.added)+len(d.updated)+len(d.removed) != 0 {
		t.Errorf("empty diff = %+v", d)
	}
}

func TestHeartbeatIntervalAndBackoff(t *testing.T) {
	none := func(time.Duration) time.Duration { return 0 }
	full := func(d time.Duration) time.Duration { return d }
	if got := heartbeatInterval(10*time.Second, none); got != 5*time.Second {
		t.Errorf("interval = %v", got)
	}
	if got := heartbeatInterval(10*time.Second, full); got != 4*time.Second {
		t.Errorf("interval with full jitter = %v", got)
	}
	if got := heartbeatInterval(0, none); got != defaultHeartbeatTTL/2 {
		t.Errorf("interval without TTL = %v", got)
	}
	for attempt, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 10: 8 * time.Second} {
		if got := backoff(time.Second, 8*time.Second, attempt, none); got != want {
			t.Errorf("backoff(%d) = %v, want %v", attempt, got, want)
		}
	}
}
