package structs

import (
	"strconv"

	"github.com/google/uuid"
)

// GenerateUUID returns a new random UUID string.
func GenerateUUID() string { return uuid.NewString() }

// ShortID returns the first 8 characters of an ID, as the CLI shows it.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// AllocName returns the name of the index-th allocation of a group:
// "job.group[index]".
func AllocName(job, group string, index int) string {
	return job + "." + group + "[" + strconv.Itoa(index) + "]"
}
