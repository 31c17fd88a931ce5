package client

import (
	"fmt"
	"syscall"
)

// statfsUsage measures the filesystem holding path with statfs(2).
func statfsUsage(path string) (DiskUsage, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return DiskUsage{}, fmt.Errorf("statfs %q: %w", path, err)
	}
	return usageOf(st.Blocks, st.Bfree, st.Files, st.Ffree), nil
}
