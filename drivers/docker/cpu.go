package docker

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
)

// defaultCPUMHz is assumed per core when /proc/cpuinfo reports no
// frequency, as the client's fingerprint does.
const defaultCPUMHz = 1000

// hostCPUMHz returns the per-core MHz the client fingerprints the node's
// CPU with: the highest "cpu MHz" of /proc/cpuinfo, else the cpufreq
// maximum, else defaultCPUMHz. A task's cpu (MHz) over it is the share of
// one core the task may use.
func hostCPUMHz() float64 {
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		mhz := parseCPUMHz(f)
		f.Close()
		if mhz > 0 {
			return mhz
		}
	}
	if b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); err == nil {
		if khz, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && khz > 0 {
			return khz / 1000
		}
	}
	return defaultCPUMHz
}

// parseCPUMHz returns the highest "cpu MHz" of a /proc/cpuinfo.
func parseCPUMHz(r io.Reader) float64 {
	var mhz float64
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(k) != "cpu MHz" {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f > mhz {
			mhz = f
		}
	}
	return mhz
}
