package stats

import (
	"fmt"
	"syscall"
)

// statfs measures the file system holding path with statfs(2).
func statfs(path string) (FSUsage, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return FSUsage{}, fmt.Errorf("statfs %q: %w", path, err)
	}
	bs := uint64(st.Bsize)
	return FSUsage{Size: st.Blocks * bs, Free: st.Bfree * bs, Available: st.Bavail * bs,
		Inodes: st.Files, InodesFree: st.Ffree}, nil
}
