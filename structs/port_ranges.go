package structs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParsePortRanges parses a list of ports and ranges as Nomad writes them
// ("22,80,8500-8600"; spaces allowed, "" is none) into the sorted,
// deduplicated ports. Every port must be in 1-65535 and every range
// ascending.
func ParsePortRanges(spec string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		loS, hiS, isRange := strings.Cut(part, "-")
		lo, err := parsePort(loS)
		if err != nil && isRange {
			return nil, fmt.Errorf("port range %q: %w", part, err)
		}
		if err != nil {
			return nil, err
		}
		hi := lo
		if isRange {
			if hi, err = parsePort(hiS); err != nil {
				return nil, fmt.Errorf("port range %q: %w", part, err)
			}
			if hi < lo {
				return nil, fmt.Errorf("port range %q: %d is below %d: write the lower port first", part, hi, lo)
			}
		}
		for p := lo; p <= hi; p++ {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func parsePort(s string) (int, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a port number", s)
	}
	if n < 1 || n > MaxValidPort {
		return 0, fmt.Errorf("port %d is out of range 1-%d", n, MaxValidPort)
	}
	return n, nil
}
