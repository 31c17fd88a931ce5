package structs

// JobVersionTag names a kept version of a job (`job tag apply`, Nomad
// 1.9's version tags): a tagged version is never dropped from the kept
// versions, and the name is unique among a job's versions.
type JobVersionTag struct {
	Name        string
	Description string
	// TaggedTime is when the tag was applied (Unix nanoseconds).
	TaggedTime int64
}

// JobTagRequest applies (or with Unset removes) a version tag. Applying
// tags Version, or the current version when it is nil; removing finds the
// version by the tag's Name.
type JobTagRequest struct {
	Namespace   string
	JobID       string
	Name        string
	Description string
	Version     *uint64
	Unset       bool
	WriteRequest
}

// JobTagResponse is the answer to a JobTagRequest.
type JobTagResponse struct {
	// Version is the version the tag was applied to or removed from.
	Version uint64
	WriteMeta
}

// MaxVersionTagNameLen and MaxVersionTagDescriptionLen bound a tag.
const (
	MaxVersionTagNameLen        = 128
	MaxVersionTagDescriptionLen = 1024
)
