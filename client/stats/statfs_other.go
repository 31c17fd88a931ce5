//go:build !linux

package stats

import "errors"

// statfs is not implemented off Linux.
func statfs(path string) (FSUsage, error) {
	return FSUsage{}, errors.New("disk stats are only measured on Linux")
}
