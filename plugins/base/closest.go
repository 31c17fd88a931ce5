package base

// closest returns the name among names that key is most likely a typo of:
// the nearest by edit distance (a swap of neighbours counts as one edit),
// when it is close enough to be one; "" when none is.
func closest(key string, names []string) string {
	best, bestDist := "", 0
	for _, n := range names {
		d := editDistance(key, n)
		if limit := max(1, min(len(key), len(n))/3); d > limit {
			continue
		}
		if best == "" || d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent characters.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
