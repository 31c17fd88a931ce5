package template

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/drover-io/drover/drivers/shared/beneath"
)

// maxRenderedSize bounds a rendered file read back (to compare, or for
// env): a template renders text, not data sets.
const maxRenderedSize = 64 << 20

// fileWriter writes one template's rendered file beneath the task's
// directory, never following a link, and only when its content changed.
type fileWriter struct {
	taskDir string
	// dest is the file, relative to taskDir (structs.TemplateDestination).
	dest     string
	perms    os.FileMode
	uid, gid *int
}

// write writes contents to the file unless it already holds them; it
// reports whether it wrote.
func (fw *fileWriter) write(contents []byte) (bool, error) {
	root, err := beneath.OpenRoot(fw.taskDir)
	if err != nil {
		return false, fmt.Errorf("open task directory: %w", err)
	}
	defer root.Close()
	old, err := readBeneath(root, fw.dest)
	switch {
	case err == nil && bytes.Equal(old, contents):
		return false, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("read %s: %w", fw.dest, err)
	}
	if dir := path.Dir(fw.dest); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return false, fmt.Errorf("create the directory of %s: %w", fw.dest, err)
		}
	}
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	tmp := path.Join(path.Dir(fw.dest), "."+path.Base(fw.dest)+".tmp-"+hex.EncodeToString(suffix[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false, fmt.Errorf("write %s: %w", fw.dest, err)
	}
	_, err = f.Write(contents)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Chmod(tmp, fw.perms)
	}
	if err == nil && (fw.uid != nil || fw.gid != nil) {
		uid, gid := -1, -1
		if fw.uid != nil {
			uid = *fw.uid
		}
		if fw.gid != nil {
			gid = *fw.gid
		}
		err = root.Chown(tmp, uid, gid)
	}
	if err == nil {
		err = root.Rename(tmp, fw.dest)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return false, fmt.Errorf("write %s: %w", fw.dest, err)
	}
	return true, nil
}

// readBeneath reads a file beneath root, up to maxRenderedSize.
func readBeneath(root *beneath.Root, name string) ([]byte, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRenderedSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxRenderedSize {
		return nil, fmt.Errorf("%s is larger than %d MiB", name, maxRenderedSize>>20)
	}
	return b, nil
}

// ReadFile reads a file beneath the task directory without following
// links (a template's source, a rendered env file).
func ReadFile(taskDir, name string) ([]byte, error) {
	root, err := beneath.OpenRoot(taskDir)
	if err != nil {
		return nil, fmt.Errorf("open task directory: %w", err)
	}
	defer root.Close()
	return readBeneath(root, name)
}
