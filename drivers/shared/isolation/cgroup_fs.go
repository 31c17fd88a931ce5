package isolation

import "os"

// cgroupFS is what the cgroup code needs of the filesystem; tests use a
// fake tree.
type cgroupFS interface {
	ReadFile(path string) ([]byte, error)
	// WriteFile writes an existing control file.
	WriteFile(path string, data []byte) error
	Mkdir(path string) error
	Rmdir(path string) error
}

// realFS is the cgroup filesystem of the host.
type realFS struct{}

// ReadFile reads a control file.
func (realFS) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

// WriteFile writes a control file that exists; it never creates one.
func (realFS) WriteFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Mkdir creates a cgroup.
func (realFS) Mkdir(path string) error { return os.Mkdir(path, 0o755) }

// Rmdir removes an empty cgroup.
func (realFS) Rmdir(path string) error { return os.Remove(path) }
