// Package logrotate writes a task's output to size-bounded, numbered files
// and lists them for readers.
//
// Where it sits in the data flow: the task shim (drivers/shared/shim) owns a
// task's stdout and stderr pipes and copies each into a FileRotator, which
// writes "<dir>/<base>.<n>" (for example "alloc/logs/web.stdout.0"). A later
// "follow logs" reader uses Files to find the files in order.
//
// Rotation rules:
//   - a file never grows beyond the size limit; when a write would exceed it,
//     the rotator splits the write at the last line break that fits, so lines
//     stay whole where possible; a line longer than a whole file is split;
//   - no byte is dropped: everything Write accepts is in some file, in order;
//   - at most maxFiles files exist: after a rotation the oldest ones beyond
//     the limit are deleted;
//   - a new rotator continues after the files already there: it appends to
//     the highest-numbered file while that has room, so a restarted writer
//     neither overwrites nor renumbers anything.
//
// A FileRotator writes straight to its file (no buffer), so what Write
// accepted survives a crash of the writing process.
//
// The writer is privileged (the shim and the agent run as root) and the
// directory may hold what a task planted, so the rotator never writes
// through a link: it opens its directory once (beneath the alloc dir
// without following any link, with NewFileRotatorBeneath) and opens,
// creates and removes its files in it with drivers/shared/beneath; a link,
// FIFO, directory or hard link found under a log's name is removed and a
// fresh file created. Readers open log files with Open, which refuses
// anything but a regular file.
package logrotate
