package api

// TaskArtifact is a file, directory or archive the client fetches into a
// task's directory before the task starts (the artifact block), in
// Nomad's API shape.
type TaskArtifact struct {
	// GetterSource is the URL or path to fetch.
	GetterSource *string `json:",omitempty"`
	// GetterOptions are added to the source URL's query (checksum, ref,
	// ...).
	GetterOptions map[string]string `json:",omitempty"`
	// GetterHeaders are sent with an http(s) request.
	GetterHeaders map[string]string `json:",omitempty"`
	// GetterMode is "any" (the default), "file" or "dir".
	GetterMode *string `json:",omitempty"`
	// GetterInsecure skips the TLS certificate check.
	GetterInsecure *bool `json:",omitempty"`
	// RelativeDest is the destination, relative to the task's directory
	// ("local/" by default).
	RelativeDest *string `json:",omitempty"`
	// Chown gives what is fetched to the task's user.
	Chown bool `json:",omitempty"`
}
