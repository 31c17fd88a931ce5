//go:build !linux

package client

import (
	"errors"
)

// statfsUsage is not implemented outside Linux: GC then applies only the
// allocation count limit.
func statfsUsage(path string) (DiskUsage, error) {
	return DiskUsage{}, errors.New("measuring disk usage is only supported on Linux")
}
