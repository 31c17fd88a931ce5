// Package allocdir builds, shows and removes the directories an
// allocation's tasks run in:
//
//	<root>/<alloc id>/alloc/{logs,tmp,data}       shared by the group's tasks
//	<root>/<alloc id>/<task>/{local,secrets,tmp}  one per task
//	<root>/<alloc id>/.<name>                     Drover's own (e.g. .shims)
//
// Where it sits in the data flow: the AllocRunner's alloc dir hook builds
// the alloc directory before any task starts and destroys it when the
// allocation is destroyed; each TaskRunner's task dir hook builds its task
// directory; drivers receive the paths in their TaskConfig; the alloc fs
// API reads it through a Viewer.
//
// # Tasks write here; the agent must not be fooled
//
// The agent runs as root and tasks (as nobody, or as root in a container)
// write into these directories, so every path is created, chmod-ed and
// removed beneath the alloc root through drivers/shared/beneath: no link
// a task plants is ever followed, and Destroy removes links instead of
// what they point to and stops at mount points. A task name that is not
// one plain directory name (empty, ".", "..", with "/" or NUL, longer than
// MaxNameLength, "alloc", or starting with "." like Drover's own entries)
// gets no directory at all, even if it slipped past the server's
// validation. alloc/logs is not writable by tasks (mode 0755): the agent
// and the shims write the logs there, and a task cannot plant anything for
// them to write through. Secrets are 0700 and, with WithSecretsTmpfs (the
// agent's client), a 1 MiB noexec tmpfs mounted when the task dir is
// built, kept across agent restarts and unmounted by Destroy (secrets.go).
//
// It imports nothing of drover's but the beneath leaf, so that the
// runners and the client can use it without import cycles. An AllocDir is
// safe for concurrent use.
package allocdir
