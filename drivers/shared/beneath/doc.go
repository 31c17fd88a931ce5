// Package beneath opens, creates, changes and removes files beneath a root
// directory without ever following a symbolic link, so that a process with
// privileges (the agent, a task's shim: both run as root) can work in a
// directory that an unprivileged task also writes to.
//
// Where it sits in the data flow: every path under an allocation directory
// that the agent or a shim touches goes through a Root: the alloc and task
// directories (client/allocdir builds and destroys them through it), the
// task logs (drivers/shared/logrotate opens and rotates them beneath the
// alloc dir), the alloc fs API (client/allocdir's readers), and the
// unpacking of a migrated alloc dir (client/allocwatcher). Code yet to come
// that writes into a task's directory on its behalf (templates, artifacts,
// volumes' mount points) must use it too: open a Root on the task or alloc
// directory and pass the destination as a name beneath it.
//
// # The rules
//
// A name given to a Root's methods is a relative, slash-separated path of
// plain components: "alloc/logs/web.stdout.0". Empty components and "."
// are ignored ("" and "." name the root itself); an absolute name, a ".."
// component or a NUL byte is refused with ErrBadName, whatever the file
// system holds. No symbolic link is followed, neither in the middle of the
// name nor at its end: meeting one fails with ErrSymlink (a link itself can
// still be created, read with Readlink, described with Lstat and removed).
// Each operation resolves the name again from the root's open descriptor,
// so renaming or replacing directories concurrently can make an operation
// fail, never make it act outside the root.
//
// On Linux 5.6 and later, a name is resolved by one openat2(2) call with
// RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS and RESOLVE_NO_MAGICLINKS. Where
// openat2 is missing (ENOSYS: an older kernel, or a seccomp filter that
// hides it), the name is walked one component at a time with openat(2) and
// O_NOFOLLOW from the previous component's descriptor, which gives the same
// guarantees with more system calls.
//
// The root's own path (the argument of OpenRoot) is trusted: symbolic
// links in it are followed, as an operator's data_dir may be one.
//
// Hard links are not refused (the kernel's fs.protected_hardlinks keeps an
// unprivileged task from linking files it does not own); a writer that
// must not write through one checks the link count of what it opened, as
// logrotate does.
package beneath
