// Package inputlimit bounds untrusted input before a recursive parser sees
// it. Parsers of nested formats (HCL, JSON, msgpack) recurse once per
// level of nesting: a small document nested 100,000 levels deep exhausts
// the stack and kills the whole process, and long before that costs
// seconds of CPU and hundreds of megabytes. The checks here are flat,
// allocation-free scans that refuse such input cheaply, with an error
// saying where it crossed which limit.
//
// Where it sits in the data flow: at every door through which input
// enters drover. jobspec checks job files (HCL and JSON), variable files
// and -var values; the agent checks its configuration files and the JSON
// bodies of HTTP requests; CheckJSON also guards jsondecode() in job
// files. Limits on values already decoded (a task's driver config, meta)
// are checked where jobs are validated, in structs (limits.go). The limits
// and where each applies are listed in docs/security.md.
//
// The package imports nothing of drover's, starts no goroutines and does
// no I/O besides ReadFile.
package inputlimit
