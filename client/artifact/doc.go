// Package artifact fetches a task's artifacts (the artifact block) into its
// directory, with hashicorp/go-getter: http(s), git, and files on the
// client; archives are unpacked and checksums verified by the getter.
//
// Where it sits in the data flow: the task runner's artifact hook calls
// Getter.Fetch for each artifact of a task before the task starts, with
// the artifact's fields already interpolated; a failure becomes the task
// event "Failed Artifact Download" and goes through the restart policy.
// The client builds one Getter from the agent's client { artifact { ... } }
// configuration and hands it to every task runner.
//
// Nothing is written where the task could redirect it. The getter
// downloads, checks and unpacks into a private staging directory made by
// the agent inside the allocation's directory (which tasks cannot write
// to); the result is then moved into the task's directory beneath a
// beneath.Root, which follows no symbolic link and refuses a name that
// leaves it, so that a link planted in the task's directory, an archive
// entry with "..", or a destination outside the task's directory cannot
// make the agent write elsewhere. Archive entries with ".." are refused by
// the getter too, and symbolic links from a fetched tree are recreated
// only when they point inside the task's directory.
//
// A source on the client's own file system is read only from the
// allocation's directory, copied into the staging directory beneath a
// beneath.Root (no link followed), unless the client's configuration sets
// disable_filesystem_isolation: the agent runs as root, and a job must not
// read the client's files (its keys, other allocations' secrets) through
// an artifact. A git source on the client's file system is refused for
// the same reason.
package artifact
