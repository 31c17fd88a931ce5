package structs

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"
)

// Nomad Variables: small sets of secret key/value items stored at a path
// in a namespace, encrypted at rest in the servers' replicated state with
// the keyring's active root key (package keyring). The servers hold them
// as VariableEncrypted; a VariableDecrypted exists only in memory, while
// a request is served.

// Limits of a variable, as Nomad's.
const (
	// MaxVariablePathLength bounds a path (bytes).
	MaxVariablePathLength = 128
	// MaxVariableSize bounds a variable's items, measured as their JSON
	// encoding: what is encrypted and stored.
	MaxVariableSize = 64 << 10
)

// VariableMetadata is a variable without its items: what lists show.
type VariableMetadata struct {
	Namespace   string
	Path        string
	CreateIndex uint64
	ModifyIndex uint64
	// CreateTime and ModifyTime are Unix nanoseconds.
	CreateTime int64
	ModifyTime int64
	// Lock is the lock held on the variable; nil when none.
	Lock *VariableLock `json:",omitempty"`
}

// VariableLock is a lock held on a variable (Nomad's var lock): only its
// holder, who knows its ID, may change the variable while it is held.
type VariableLock struct {
	// ID names the holder; the server makes it when the lock is taken.
	ID string
	// TTL is how long the lock lasts without being renewed (a Go
	// duration such as "15s").
	TTL string
	// LockDelay is how long after a lock expires before it may be taken
	// again (a Go duration).
	LockDelay string
}

// VariableItems are a variable's key/value pairs.
type VariableItems map[string]string

// VariableDecrypted is a variable with its items in the clear: the HTTP
// API's Variable. It exists only in memory, while a request is served.
type VariableDecrypted struct {
	VariableMetadata
	Items VariableItems
}

// VariableEncrypted is a variable as the state store keeps it: its items
// are Data, sealed with the root key KeyID (keyring.Seal), bound to the
// variable's namespace and path.
type VariableEncrypted struct {
	VariableMetadata
	KeyID string
	Data  []byte
}

// Copy returns a deep copy of v; nil for nil.
func (v *VariableDecrypted) Copy() *VariableDecrypted {
	if v == nil {
		return nil
	}
	c := *v
	c.Lock = v.Lock.Copy()
	c.Items = maps.Clone(v.Items)
	return &c
}

// Copy returns a copy of v; nil for nil.
func (v *VariableEncrypted) Copy() *VariableEncrypted {
	if v == nil {
		return nil
	}
	c := *v
	c.Lock = v.Lock.Copy()
	c.Data = append([]byte(nil), v.Data...)
	return &c
}

// Copy returns a copy of l; nil for nil.
func (l *VariableLock) Copy() *VariableLock {
	if l == nil {
		return nil
	}
	c := *l
	return &c
}

// Metadata returns a copy of the variable's metadata.
func (v *VariableEncrypted) Metadata() *VariableMetadata {
	m := v.VariableMetadata
	m.Lock = v.Lock.Copy()
	return &m
}

// AdditionalData is what a variable's ciphertext is bound to: its
// namespace and path, so that a ciphertext copied to another variable in
// the state does not decrypt there.
func VariableAdditionalData(namespace, path string) []byte {
	return []byte("drover-variable\x00" + namespace + "\x00" + path)
}

// ValidateVariablePath checks a variable's path: 1 to 128 characters among
// letters, digits, "-", "_", "~" and "/" (so no ".." and nothing a template
// cannot name); not starting or ending with "/" nor holding "//". Under
// "nomad/", the prefix Nomad reserves, only "nomad/jobs" and the paths
// below it are allowed: they are the ones a task reads
// (WorkloadMayReadVariable).
func ValidateVariablePath(path string) error {
	switch {
	case path == "":
		return Invalid("variable path is empty: give a path such as \"app/config\"")
	case len(path) > MaxVariablePathLength:
		return Invalid("variable path %.32q... is %d bytes long: at most %d are allowed", path, len(path), MaxVariablePathLength)
	case strings.Contains(path, ".."):
		return Invalid("variable path %q contains \"..\": a path names a variable, not a file; remove the dots", path)
	}
	for _, r := range path {
		if !validVariablePathRune(r) {
			return Invalid("variable path %q contains %q: use only letters, digits, \"-\", \"_\", \"~\" and \"/\"", path, r)
		}
	}
	if strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") || strings.Contains(path, "//") {
		return Invalid("variable path %q has an empty segment: remove the leading, trailing or doubled \"/\"", path)
	}
	if path == "nomad" || strings.HasPrefix(path, "nomad/") {
		if path != "nomad/jobs" && !strings.HasPrefix(path, "nomad/jobs/") {
			return Invalid("variable path %q is reserved: under \"nomad/\" only \"nomad/jobs\" and the paths below it may be used", path)
		}
	}
	return nil
}

func validVariablePathRune(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	case r == '-' || r == '_' || r == '~' || r == '/':
		return true
	}
	return false
}

// ValidateNamespaceName checks the name of a namespace a variable is
// written to: 1 to 128 letters, digits and "-", as Nomad's namespaces.
func ValidateNamespaceName(ns string) error {
	if ns == "" || len(ns) > 128 {
		return Invalid("namespace %q is invalid: it must be 1 to 128 characters long", ns)
	}
	for _, r := range ns {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return Invalid("namespace %q contains %q: use only letters, digits and \"-\"", ns, r)
		}
	}
	return nil
}

// EncodeVariableItems returns the plaintext that is sealed for items,
// checking that there is at least one item, that no key is empty, and
// that the encoding is within MaxVariableSize.
func EncodeVariableItems(items VariableItems) ([]byte, error) {
	if len(items) == 0 {
		return nil, Invalid("variable missing required Items object")
	}
	if _, ok := items[""]; ok {
		return nil, Invalid("variable has an item with an empty key: give every item a name")
	}
	b, err := json.Marshal(items)
	if err != nil {
		return nil, fmt.Errorf("encode variable items: %w", err)
	}
	if len(b) > MaxVariableSize {
		return nil, Invalid("variable items are %d bytes (as JSON): at most %d (64 KiB) are allowed; store large data elsewhere", len(b), MaxVariableSize)
	}
	return b, nil
}

// DecodeVariableItems decodes what EncodeVariableItems returned.
func DecodeVariableItems(b []byte) (VariableItems, error) {
	var items VariableItems
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, fmt.Errorf("decode variable items: %w", err)
	}
	return items, nil
}

// WorkloadIdentity names the task a request for variables is made for
// (from its workload identity, once there is one; until then from the
// allocation the task belongs to).
type WorkloadIdentity struct {
	Namespace string
	JobID     string
	Group     string
	Task      string
}

// WorkloadMayReadVariable is the access rule of a task to variables
// without ACL policies (Nomad's implicit policy): a task reads, in its
// own namespace, "nomad/jobs", "nomad/jobs/<job>",
// "nomad/jobs/<job>/<group>" and "nomad/jobs/<job>/<group>/<task>". Paths
// granted by ACL policies come with the security work; template rendering
// calls this for every variable it reads or lists.
func WorkloadMayReadVariable(wi WorkloadIdentity, namespace, path string) bool {
	if wi.Namespace == "" || namespace != wi.Namespace || wi.JobID == "" {
		return false
	}
	job := "nomad/jobs/" + wi.JobID
	switch path {
	case "nomad/jobs", job:
		return true
	case job + "/" + wi.Group:
		return wi.Group != ""
	case job + "/" + wi.Group + "/" + wi.Task:
		return wi.Group != "" && wi.Task != ""
	}
	return false
}

// Variable apply operations (VariablesApplyRequest.Op), as Nomad's.
const (
	// VarOpSet writes the variable.
	VarOpSet = "set"
	// VarOpDelete deletes the variable.
	VarOpDelete = "delete"
	// VarOpCAS writes the variable only if its ModifyIndex is the
	// request's CheckIndex (0: only if it does not exist).
	VarOpCAS = "cas"
	// VarOpDeleteCAS deletes the variable only if its ModifyIndex is
	// CheckIndex.
	VarOpDeleteCAS = "delete-cas"
	// VarOpLockAcquire takes the variable's lock (writing the variable,
	// which need not exist).
	VarOpLockAcquire = "lock-acquire"
	// VarOpLockRenew renews the lock held.
	VarOpLockRenew = "lock-renew"
	// VarOpLockRelease releases the lock held.
	VarOpLockRelease = "lock-release"
)

// VariablesListRequest lists the variables of a namespace ("*": all)
// whose path starts with Prefix, in path order, at most PerPage of them
// (0: all) from NextToken on.
type VariablesListRequest struct {
	PerPage   int
	NextToken string
	QueryOptions
}

// VariablesListResponse lists variables' metadata; NextToken, when not
// empty, is where the next page starts.
type VariablesListResponse struct {
	Data      []*VariableMetadata
	NextToken string
	QueryMeta
}

// VariablesReadRequest reads the variable at Path in the request's
// namespace.
type VariablesReadRequest struct {
	Path string
	QueryOptions
}

// VariablesReadResponse returns a variable; Data is nil when there is none.
type VariablesReadResponse struct {
	Data *VariableDecrypted
	QueryMeta
}

// VariablesApplyRequest changes a variable (Op: VarOp*). Var names it (its
// Namespace, "default" when empty, and Path) and, for a write, holds its
// items; CheckIndex is the ModifyIndex a CAS expects.
type VariablesApplyRequest struct {
	Op         string
	Var        *VariableDecrypted
	CheckIndex uint64
	WriteRequest
}

// VariablesApplyResponse answers a variable change. Conflicted says that
// a CAS (or a lock operation) did not apply: Conflict is then the variable
// as it is, with only its namespace and path when it does not exist.
// Output is the variable as written (nil after a delete), its items as
// sent.
type VariablesApplyResponse struct {
	Op         string
	Conflicted bool
	Conflict   *VariableDecrypted
	Output     *VariableDecrypted
	WriteMeta
}

// Variable lock bounds, as Nomad's.
const (
	// DefaultVariableLockTTL is a lock's TTL when the request gives none.
	DefaultVariableLockTTL = 15 * time.Second
	// DefaultVariableLockDelay is a lock's delay when the request gives
	// none.
	DefaultVariableLockDelay = 15 * time.Second
	// MinVariableLockTTL and MaxVariableLockTTL bound a lock's TTL.
	MinVariableLockTTL = 10 * time.Second
	MaxVariableLockTTL = 24 * time.Hour
	// MaxVariableLockDelay bounds a lock's delay.
	MaxVariableLockDelay = 24 * time.Hour
)

// LockDurations returns the TTL and delay of a lock to take, with the
// defaults for those l (which may be nil) leaves empty, checking their
// bounds.
func (l *VariableLock) LockDurations() (ttl, delay time.Duration, err error) {
	ttl, delay = DefaultVariableLockTTL, DefaultVariableLockDelay
	if l == nil {
		return ttl, delay, nil
	}
	if l.TTL != "" {
		if ttl, err = time.ParseDuration(l.TTL); err != nil {
			return 0, 0, Invalid("lock TTL %q is invalid: use a duration such as 15s", l.TTL)
		}
		if ttl < MinVariableLockTTL || ttl > MaxVariableLockTTL {
			return 0, 0, Invalid("lock TTL %s is out of range: use %s to %s", ttl, MinVariableLockTTL, MaxVariableLockTTL)
		}
	}
	if l.LockDelay != "" {
		if delay, err = time.ParseDuration(l.LockDelay); err != nil {
			return 0, 0, Invalid("lock delay %q is invalid: use a duration such as 15s", l.LockDelay)
		}
		if delay < 0 || delay > MaxVariableLockDelay {
			return 0, 0, Invalid("lock delay %s is out of range: use 0s to %s", delay, MaxVariableLockDelay)
		}
	}
	return ttl, delay, nil
}
