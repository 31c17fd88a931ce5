package api

import "time"

// Template is a task's template block, as Nomad's API has it: a file the
// client renders (with consul-template's language) into the task's
// directory before the task starts, and again when what it reads changes.
type Template struct {
	// SourcePath is a template file on the client (relative to the task's
	// directory), read instead of EmbeddedTmpl.
	SourcePath *string `json:",omitempty"`
	// DestPath is where the rendered file goes, relative to the task's
	// directory.
	DestPath *string `json:",omitempty"`
	// EmbeddedTmpl is the template itself (the block's data).
	EmbeddedTmpl *string `json:",omitempty"`
	// ChangeMode is what a re-render does: "restart" (the default),
	// "signal", "noop" or "script".
	ChangeMode *string `json:",omitempty"`
	// ChangeScript runs inside the task when ChangeMode is "script".
	ChangeScript *ChangeScript `json:",omitempty"`
	// ChangeSignal is sent to the task when ChangeMode is "signal".
	ChangeSignal *string `json:",omitempty"`
	// Splay is the most a change's action is delayed, at random.
	Splay *time.Duration `json:",omitempty"`
	// Perms are the rendered file's permissions, in octal ("0644").
	Perms *string `json:",omitempty"`
	// Uid and Gid own the rendered file when set.
	Uid *int `json:",omitempty"`
	Gid *int `json:",omitempty"`
	// LeftDelim and RightDelim replace "{{" and "}}".
	LeftDelim  *string `json:",omitempty"`
	RightDelim *string `json:",omitempty"`
	// Envvars reads the rendered file (KEY=VALUE lines) into the task's
	// environment.
	Envvars *bool `json:",omitempty"`
	// VaultGrace is Nomad's deprecated, ignored Vault lease grace.
	VaultGrace *time.Duration `json:",omitempty"`
	// Wait bounds how long a change is held back for more changes.
	Wait *WaitConfig `json:",omitempty"`
	// ErrMissingKey fails the render when a map key is missing.
	ErrMissingKey *bool `json:",omitempty"`
	// Once renders only before the task starts, never again.
	Once *bool `json:",omitempty"`
}

// ChangeScript is a template's change_script block.
type ChangeScript struct {
	// Command and Args are run inside the task.
	Command *string  `json:",omitempty"`
	Args    []string `json:",omitempty"`
	// Timeout bounds the script (5 s by default).
	Timeout *time.Duration `json:",omitempty"`
	// FailOnError kills the task when the script fails.
	FailOnError *bool `json:",omitempty"`
}

// WaitConfig is a template's wait block.
type WaitConfig struct {
	Min *time.Duration `json:",omitempty"`
	Max *time.Duration `json:",omitempty"`
}
