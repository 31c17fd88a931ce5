// Package snapshot is the format of a cluster state archive: what
// `drover operator snapshot save` writes, `restore` reads back and
// `inspect` describes.
//
// Where it sits in the data flow: a server (the leader, unless the save
// is ?stale) serializes its state store as a raft snapshot of its FSM
// would, and wraps it here with its metadata and checksums; the archive
// crosses the HTTP API as the body of GET and PUT /v1/operator/snapshot.
// A restore hands the state back to raft, which installs it on every
// server.
//
// An archive is a gzip-compressed tar of three files: meta.json (Meta),
// state.bin (the FSM's snapshot stream) and SHA256SUMS (the SHA-256 of
// the other two, as sha256sum writes them). Read refuses an archive whose
// files are missing, whose checksums do not match, or whose version it
// does not know, with ErrCorrupt or ErrVersion.
package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Version is the archive version this package writes and reads.
const Version = 1

// File names inside an archive.
const (
	metaFile  = "meta.json"
	stateFile = "state.bin"
	sumsFile  = "SHA256SUMS"
)

// maxFileBytes bounds a file read from an archive.
const maxFileBytes = 1 << 30

// Errors of Read; test with errors.Is.
var (
	// ErrCorrupt: the data is not a whole, intact archive.
	ErrCorrupt = errors.New("snapshot archive is corrupt")
	// ErrVersion: the archive was written by a newer drover.
	ErrVersion = errors.New("snapshot archive version is not supported")
)

// Meta describes an archive's state.
type Meta struct {
	Version int
	// ID names the snapshot: "<term>-<index>-<unix ms>".
	ID string
	// Index and Term are the raft index and term the state reached.
	Index uint64
	Term  uint64
	// ClusterID is the cluster the state was saved from.
	ClusterID string
	// Created is when the archive was written.
	Created time.Time
	// Size is state.bin's length in bytes.
	Size int64
	// Counts of objects, for inspect.
	Jobs        int
	Allocations int
	Evaluations int
	Nodes       int
	Deployments int
}

// Write writes an archive of state, described by meta (its Version, Size
// and, when empty, ID are filled here), to w.
func Write(w io.Writer, meta Meta, state []byte) error {
	meta.Version = Version
	meta.Size = int64(len(state))
	if meta.ID == "" {
		meta.ID = fmt.Sprintf("%d-%d-%d", meta.Term, meta.Index, meta.Created.UnixMilli())
	}
	mj, err := json.MarshalIndent(&meta, "", "  ")
	if err != nil {
		return fmt.Errorf("encode snapshot metadata: %w", err)
	}
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	sums := fmt.Sprintf("%s  %s\n%s  %s\n", sum(mj), metaFile, sum(state), stateFile)
	for _, f := range []struct {
		name string
		data []byte
	}{{metaFile, mj}, {stateFile, state}, {sumsFile, []byte(sums)}} {
		hdr := &tar.Header{Name: f.name, Mode: 0o600, Size: int64(len(f.data)), ModTime: meta.Created, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("write snapshot archive: %w", err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return fmt.Errorf("write snapshot archive: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("write snapshot archive: %w", err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("write snapshot archive: %w", err)
	}
	return nil
}

// Read reads an archive from r and returns its metadata and state, after
// checking both against the archive's checksums.
func Read(r io.Reader) (*Meta, []byte, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, nil, corrupt("not a gzip stream: %v", err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	files := map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, corrupt("read the tar stream: %v", err)
		}
		if hdr.Size > maxFileBytes {
			return nil, nil, corrupt("%s is %d bytes long", hdr.Name, hdr.Size)
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxFileBytes))
		if err != nil {
			return nil, nil, corrupt("read %s: %v", hdr.Name, err)
		}
		files[hdr.Name] = data
	}
	for _, name := range []string{metaFile, stateFile, sumsFile} {
		if _, ok := files[name]; !ok {
			return nil, nil, corrupt("%s is missing", name)
		}
	}
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(files[sumsFile])), "\n") {
		h, name, ok := strings.Cut(line, "  ")
		if ok {
			want[name] = h
		}
	}
	for _, name := range []string{metaFile, stateFile} {
		if got := sum(files[name]); want[name] != got {
			return nil, nil, corrupt("the checksum of %s does not match (%s, want %q)", name, got, want[name])
		}
	}
	var meta Meta
	if err := json.Unmarshal(files[metaFile], &meta); err != nil {
		return nil, nil, corrupt("decode %s: %v", metaFile, err)
	}
	if meta.Version != Version {
		return nil, nil, fmt.Errorf("%w: version %d (this drover reads version %d): restore it with the drover that saved it", ErrVersion, meta.Version, Version)
	}
	if meta.Size != int64(len(files[stateFile])) {
		return nil, nil, corrupt("%s is %d bytes long, its metadata says %d", stateFile, len(files[stateFile]), meta.Size)
	}
	return &meta, files[stateFile], nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Bytes returns the archive of state as bytes (Write into a buffer).
func Bytes(meta Meta, state []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := Write(&buf, meta, state); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
