package artifact

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/drover-io/drover/drivers/shared/beneath"
)

// dirPerm is the mode of the directories an artifact creates.
const dirPerm = 0o755

// place moves what the getter left at src (a file, or a directory tree)
// to target, both names beneath root (the allocation's directory): a file
// to target's path, a tree's content into target. Every name is resolved
// beneath root without following links, so nothing lands outside it nor
// through a link in the task's directory. It returns the names it wrote.
func place(root *beneath.Root, src, target string) ([]string, error) {
	fi, err := root.Lstat(src)
	if err != nil {
		return nil, &Error{Err: fmt.Errorf("the getter left nothing: %w", err), Recoverable: true}
	}
	var placed []string
	if !fi.IsDir() {
		if err := mkdirAll(root, path.Dir(target)); err != nil {
			return nil, err
		}
		if err := moveFile(root, src, target, fi); err != nil {
			return nil, err
		}
		return []string{target}, nil
	}
	_, lerr := root.Lstat(target)
	if err := mkdirAll(root, target); err != nil {
		return nil, err
	}
	if lerr != nil {
		placed = append(placed, target) // made here
	}
	taskDir, _, _ := strings.Cut(target, "/")
	err = placeTree(root, src, target, taskDir, &placed)
	return placed, err
}

// placeTree moves the entries of directory src into directory dst.
func placeTree(root *beneath.Root, src, dst, taskDir string, placed *[]string) error {
	entries, err := root.ReadDir(src)
	if err != nil {
		return &Error{Err: fmt.Errorf("read %s: %w", src, err), Recoverable: true}
	}
	for _, e := range entries {
		from, to := src+"/"+e.Name(), dst+"/"+e.Name()
		switch m := e.Mode(); {
		case m.IsDir():
			if err := mkdirAll(root, to); err != nil {
				return err
			}
			*placed = append(*placed, to)
			if err := placeTree(root, from, to, taskDir, placed); err != nil {
				return err
			}
		case m.IsRegular():
			if err := moveFile(root, from, to, e); err != nil {
				return err
			}
			*placed = append(*placed, to)
		case m&fs.ModeSymlink != 0:
			if err := placeLink(root, from, to, taskDir); err != nil {
				return err
			}
		default:
			return permanent("%s is not a regular file, a directory or a link (%s): artifacts hold only those", strings.TrimPrefix(to, taskDir+"/"), m.Type())
		}
	}
	return nil
}

// placeLink recreates the link from at to, if it points inside the task's
// directory.
func placeLink(root *beneath.Root, from, to, taskDir string) error {
	target, err := root.Readlink(from)
	if err != nil {
		return &Error{Err: err, Recoverable: true}
	}
	rel := strings.TrimPrefix(to, taskDir+"/")
	resolved := path.Join(path.Dir(to), target)
	if path.IsAbs(target) || (resolved != taskDir && !strings.HasPrefix(resolved, taskDir+"/")) {
		return permanent("%s is a symbolic link to %q, outside the task's directory: artifacts may hold only links that stay inside it", rel, target)
	}
	if fi, err := root.Lstat(to); err == nil {
		if fi.IsDir() {
			return permanent("%s is a link in the artifact but a directory in the task's directory", rel)
		}
		if err := root.Remove(to); err != nil {
			return wrapPlace(to, err)
		}
	}
	return wrapPlace(to, root.Symlink(target, to))
}

// moveFile moves the regular file from to to, replacing a file there:
// a rename, or a copy when they are on different file systems.
func moveFile(root *beneath.Root, from, to string, fi fs.FileInfo) error {
	if cur, err := root.Lstat(to); err == nil && cur.IsDir() {
		return permanent("%s is a directory in the task's directory: the artifact's file cannot replace it", to)
	}
	err := root.Rename(from, to)
	if !errors.Is(err, syscall.EXDEV) {
		return wrapPlace(to, err)
	}
	in, err := root.Open(from)
	if err != nil {
		return &Error{Err: err, Recoverable: true}
	}
	defer in.Close()
	out, err := root.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return wrapPlace(to, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return &Error{Err: fmt.Errorf("write %s: %w", to, err), Recoverable: true}
	}
	if err := out.Close(); err != nil {
		return &Error{Err: fmt.Errorf("write %s: %w", to, err), Recoverable: true}
	}
	return wrapPlace(to, root.Chmod(to, fi.Mode().Perm()))
}

func mkdirAll(root *beneath.Root, name string) error {
	if name == "" || name == "." {
		return nil
	}
	return wrapPlace(name, root.MkdirAll(name, dirPerm))
}

// wrapPlace classifies an error of writing name: a link on the way or a
// name that leaves the root is permanent (the task's directory holds a
// link where the artifact goes); the rest may pass.
func wrapPlace(name string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, beneath.ErrSymlink):
		return permanent("write %s: a symbolic link is on the way, and artifacts are never written through one: %v", name, err)
	case errors.Is(err, beneath.ErrBadName):
		return permanent("write %s: the name leaves the task's directory: %v", name, err)
	}
	return &Error{Err: fmt.Errorf("write %s: %w", name, err), Recoverable: true}
}

// copyLocal copies the local source p (absolute, or relative to taskDir)
// into dst, reading it beneath root (the allocation's directory, allocDir)
// without following links: a source outside the allocation's directory is
// refused. It returns the copy's path, which keeps the source's name (the
// getter unpacks archives by their extension).
func copyLocal(root *beneath.Root, allocDir, taskDir, p, dst string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(taskDir, p)
	}
	rel, err := filepath.Rel(allocDir, filepath.Clean(p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || rel == "." {
		return "", permanent("artifact source %s is outside the allocation's directory: the client reads only its own files there "+
			"(set disable_filesystem_isolation in the client's artifact block to allow others)", p)
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		return "", &Error{Err: err, Recoverable: true}
	}
	out := filepath.Join(dst, filepath.Base(rel))
	if err := copyBeneath(root, filepath.ToSlash(rel), out); err != nil {
		return "", err
	}
	return out, nil
}

// copyBeneath copies the file or tree name beneath root to dst.
func copyBeneath(root *beneath.Root, name, dst string) error {
	fi, err := root.Lstat(name)
	switch {
	case errors.Is(err, beneath.ErrSymlink):
		return permanent("artifact source %s has a symbolic link on its path: sources on the client are read without following links", name)
	case err != nil:
		return &Error{Err: fmt.Errorf("artifact source %s: %w", name, err), Recoverable: true}
	}
	switch m := fi.Mode(); {
	case m.IsRegular():
		in, err := root.Open(name)
		if err != nil {
			return &Error{Err: err, Recoverable: true}
		}
		defer in.Close()
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, m.Perm())
		if err != nil {
			return &Error{Err: err, Recoverable: true}
		}
		if _, err := io.Copy(out, in); err != nil {
			_ = out.Close()
			return &Error{Err: err, Recoverable: true}
		}
		return out.Close()
	case m.IsDir():
		if err := os.Mkdir(dst, 0o700); err != nil {
			return &Error{Err: err, Recoverable: true}
		}
		entries, err := root.ReadDir(name)
		if err != nil {
			return &Error{Err: err, Recoverable: true}
		}
		for _, e := range entries {
			if err := copyBeneath(root, name+"/"+e.Name(), filepath.Join(dst, e.Name())); err != nil {
				return err
			}
		}
		return nil
	case m&fs.ModeSymlink != 0:
		return permanent("artifact source %s is a symbolic link: sources on the client are read without following links", name)
	}
	return permanent("artifact source %s is not a regular file nor a directory", name)
}
