package client

// usageOf turns statfs counts into percentages. A filesystem that reports
// no inode counts (btrfs) has 0% inode usage.
func usageOf(blocks, bfree, files, ffree uint64) DiskUsage {
	var u DiskUsage
	if blocks > 0 {
		u.UsedPercent = 100 * float64(blocks-min(bfree, blocks)) / float64(blocks)
	}
	if files > 0 {
		u.InodesUsedPercent = 100 * float64(files-min(ffree, files)) / float64(files)
	}
	return u
}
