package state

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// DefaultOpenTimeout is how long NewBoltStateDB waits for another process
// to release the state file's lock before it gives up.
const DefaultOpenTimeout = 5 * time.Second

// StatePath returns the path of the state file under an agent's data_dir.
func StatePath(dataDir string) string {
	return filepath.Join(dataDir, stateDirName, stateFileName)
}

// NewBoltStateDB opens, creating it if needed, the agent's state file
// <dataDir>/client/state.db (directories 0700, file 0600), upgrading an
// older schema after keeping a copy of the old file. It fails, leaving the
// file untouched, when the file is locked by another process (ErrLocked),
// corrupt (ErrCorrupt) or written by a newer drover (ErrSchemaTooNew).
//
// A file of zero bytes is a new node's only when the client's alloc dir
// (WithAllocDir; default <dataDir>/alloc) holds no allocation directory:
// otherwise the file lost what it held (a crash while it was created, a
// full disk), and starting afresh would register a new node and run the
// tasks of those allocations a second time, so it is ErrCorrupt.
func NewBoltStateDB(dataDir string, logger *slog.Logger, opts ...Option) (*BoltStateDB, error) {
	return openBoltStateDB(dataDir, logger, DefaultOpenTimeout, opts...)
}

// Option configures NewBoltStateDB.
type Option func(*openOptions)

type openOptions struct {
	allocDir string
}

// WithAllocDir names the client's alloc dir (its alloc_dir setting),
// whose allocation directories tell an empty state file that lost its
// contents from a new node's.
func WithAllocDir(dir string) Option {
	return func(o *openOptions) {
		if dir != "" {
			o.allocDir = dir
		}
	}
}

func openBoltStateDB(dataDir string, logger *slog.Logger, timeout time.Duration, opts ...Option) (*BoltStateDB, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	o := openOptions{allocDir: filepath.Join(dataDir, "alloc")}
	for _, opt := range opts {
		opt(&o)
	}
	path := StatePath(dataDir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	logger = logger.With("path", path)

	// Inspect an existing file read-only first, so that nothing is ever
	// written to a file that is corrupt or newer than this drover.
	version, err := inspectFile(path, timeout)
	if errors.Is(err, errEmptyFile) {
		err = checkEmptyFile(path, o.allocDir)
	}
	if err != nil {
		return nil, err
	}
	if version > SchemaVersion {
		return nil, tooNewError(path, version)
	}

	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout})
	if err != nil {
		return nil, classifyOpenError(path, err)
	}
	s := &BoltStateDB{path: path, db: db, group: newGroupCommitter(db), logger: logger, cache: newWriteCache()}
	if err := s.prepareSchema(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// errEmptyFile is inspectFile's answer for a file of zero bytes.
var errEmptyFile = errors.New("state file is empty")

// inspectFile opens an existing, non-empty state file read-only, checks
// its structure and returns its schema version (0 for a new file); a file
// of zero bytes is errEmptyFile.
func inspectFile(path string, timeout time.Duration) (int, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("state file %s: %w", path, err)
	}
	if info.Size() == 0 {
		return 0, errEmptyFile
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: timeout})
	if err != nil {
		return 0, classifyOpenError(path, err)
	}
	defer db.Close()

	var version int
	err = db.View(func(tx *bolt.Tx) error {
		// A file cut short would make bbolt fault on the missing pages:
		// compare the size its header claims with the real one first.
		if tx.Size() > info.Size() {
			return corruptError(path, fmt.Errorf("file is %d bytes but its header says %d (truncated?)", info.Size(), tx.Size()))
		}
		if err := checkTx(tx); err != nil {
			return corruptError(path, err)
		}
		v, err := readVersion(tx)
		if err != nil {
			return corruptError(path, err)
		}
		version = v
		return nil
	})
	return version, err
}

// checkTx runs bbolt's consistency check and returns its first few errors.
func checkTx(tx *bolt.Tx) error {
	var msgs []string
	for err := range tx.Check() {
		if len(msgs) < 3 {
			msgs = append(msgs, err.Error())
		}
	}
	if len(msgs) > 0 {
		return fmt.Errorf("consistency check failed: %s", strings.Join(msgs, "; "))
	}
	return nil
}

// prepareSchema creates the layout in a new file, upgrades an old one, or
// checks the current one.
func (s *BoltStateDB) prepareSchema() error {
	var version int
	err := s.db.View(func(tx *bolt.Tx) error {
		v, err := readVersion(tx)
		version = v
		return err
	})
	if err != nil {
		return corruptError(s.path, err)
	}
	switch {
	case version == 0:
		if err := s.db.Update(initSchema); err != nil {
			return fmt.Errorf("initialise state file %s: %w", s.path, err)
		}
		s.logger.Info("created client state file", "schema_version", SchemaVersion)
		return nil
	case version == 1:
		return s.upgradeFromV1()
	case version == SchemaVersion:
		if err := s.db.View(checkSchema); err != nil {
			return corruptError(s.path, err)
		}
		return nil
	case version > SchemaVersion:
		return tooNewError(s.path, version)
	}
	return corruptError(s.path, fmt.Errorf("unknown schema version %d", version))
}

// checkEmptyFile decides a state file of zero bytes: a file created but
// never initialised (bbolt formats it) when allocDir holds no allocation
// directory, else corrupt.
func checkEmptyFile(path, allocDir string) error {
	entries, err := os.ReadDir(allocDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("state file %s is empty; cannot tell a new node from a lost state without alloc dir %s: %w", path, allocDir, err)
	}
	allocs := 0
	for _, e := range entries {
		if e.IsDir() {
			allocs++
		}
	}
	if allocs == 0 {
		return nil
	}
	return corruptError(path, fmt.Errorf("the file is empty (0 bytes) but alloc dir %s holds allocation "+
		"directories (%d): the file lost its contents (a crash while it was written, a full disk?), and starting "+
		"as a new node would run the tasks of those allocations a second time", allocDir, allocs))
}
