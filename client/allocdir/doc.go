// Package allocdir builds and removes the directories an allocation's tasks
// run in:
//
//	<root>/<alloc id>/alloc/{logs,tmp,data}       shared by the group's tasks
//	<root>/<alloc id>/<task>/{local,secrets,tmp}  one per task
//
// Where it sits in the data flow: the AllocRunner's alloc dir hook builds
// the alloc directory before any task starts and destroys it when the
// allocation is destroyed; each TaskRunner's task dir hook builds its task
// directory; drivers receive the paths in their TaskConfig.
//
// It imports nothing of the client so that drivers and the runners can all
// use it without import cycles. An AllocDir is safe for concurrent use.
package allocdir
