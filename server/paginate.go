package server

import "github.com/drover-io/drover/structs"

// paginate returns the page of items that opts asks for and sets
// meta.NextToken. items are in ascending order of key (a list read from an
// ID index), and a token is the key of a page's first item: a page starts
// at the first item whose key is not below the token, so that a token
// whose item was deleted meanwhile still resumes where it was. PerPage 0
// (or below) is no paging: every item from the token on.
func paginate[T any](items []T, key func(T) string, opts *structs.QueryOptions, meta *structs.QueryMeta) []T {
	meta.NextToken = ""
	start := 0
	if opts.NextToken != "" {
		for start < len(items) && key(items[start]) < opts.NextToken {
			start++
		}
	}
	items = items[start:]
	if opts.PerPage > 0 && len(items) > int(opts.PerPage) {
		meta.NextToken = key(items[opts.PerPage])
		items = items[:opts.PerPage]
	}
	return items
}
