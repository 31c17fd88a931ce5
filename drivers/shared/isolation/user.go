package isolation

import (
	"fmt"
	"os/user"
	"strconv"
)

// DefaultUser is the user tasks run as unless told otherwise.
const DefaultUser = "nobody"

// LookupUser returns the uid, gid and supplementary groups of name (a user
// name or numeric uid) from the host's user database.
func LookupUser(name string) (uid, gid uint32, groups []uint32, err error) {
	u, err := user.Lookup(name)
	if err != nil {
		if _, nerr := strconv.ParseUint(name, 10, 32); nerr != nil {
			return 0, 0, nil, fmt.Errorf("look up user %q: %w", name, err)
		}
		if u, err = user.LookupId(name); err != nil {
			return 0, 0, nil, fmt.Errorf("look up user %q: %w", name, err)
		}
	}
	id, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("user %q: invalid uid %q", name, u.Uid)
	}
	g, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("user %q: invalid gid %q", name, u.Gid)
	}
	if ids, err := u.GroupIds(); err == nil {
		for _, s := range ids {
			if n, err := strconv.ParseUint(s, 10, 32); err == nil && uint32(n) != uint32(g) {
				groups = append(groups, uint32(n))
			}
		}
	}
	return uint32(id), uint32(g), groups, nil
}
