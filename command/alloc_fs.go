package command

import (
	"fmt"
	"io"
	"strconv"

	"github.com/drover-io/drover/api"
)

func runAllocFS(m *Meta, args []string) int {
	fset := m.apiFlagSet("alloc fs", "[options] <alloc-id> [path]", `
Browse an allocation's directory on the node that runs it: a directory is
listed (mode, size, modification time, name), a file is printed. The path
is relative to the allocation directory ("/" or none: its root), which
holds alloc/ (shared by the tasks: alloc/logs, alloc/data, alloc/tmp) and
one directory per task. Paths cannot leave the allocation directory.

The request goes to the agent of the node that runs the allocation: the
agent at -address may be any agent, which forwards it to that node's.`)
	stat := fset.Bool("stat", false, "Describe the file or directory instead of printing or listing it.")
	human := fset.Bool("H", false, "Show sizes in human-readable units.")
	verbose := fset.Bool("verbose", false, "Show full IDs.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() < 1 || fset.NArg() > 2 {
		return m.usageError(fset, "this command takes one or two arguments: the allocation ID and, optionally, a path")
	}
	path := "/"
	if fset.NArg() == 2 {
		path = fset.Arg(1)
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	alloc, code := m.lookupAlloc(c, fset.Arg(0), *verbose)
	if alloc == nil {
		return code
	}
	fs := c.AllocFS()
	info, _, err := fs.Stat(alloc, path, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("reading %q in allocation %s", path, shortID(alloc.ID, *verbose)), err)
	}
	if *stat {
		fmt.Fprint(m.stdout, formatFileTable([]*api.AllocFileInfo{info}, *human, true))
		return exitOK
	}
	if info.IsDir {
		files, _, err := fs.List(alloc, path, nil)
		if err != nil {
			return m.fail(fmt.Sprintf("listing %q in allocation %s", path, shortID(alloc.ID, *verbose)), err)
		}
		if len(files) == 0 {
			fmt.Fprintf(m.stdout, "%s is empty\n", path)
			return exitOK
		}
		fmt.Fprint(m.stdout, formatFileTable(files, *human, false))
		return exitOK
	}
	r, err := fs.Cat(alloc, path, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("reading %q in allocation %s", path, shortID(alloc.ID, *verbose)), err)
	}
	defer r.Close()
	if _, err := io.Copy(m.stdout, r); err != nil {
		return m.fail(fmt.Sprintf("reading %q in allocation %s", path, shortID(alloc.ID, *verbose)), err)
	}
	return exitOK
}

// formatFileTable renders files as an aligned table; withType adds the
// content type column (for -stat).
func formatFileTable(files []*api.AllocFileInfo, human, withType bool) string {
	header := []string{"Mode", "Size", "Modified Time", "Name"}
	if withType {
		header = append(header, "Content Type")
	}
	rows := make([][]string, 0, len(files))
	for _, f := range files {
		name := f.Name
		if f.IsDir {
			name += "/"
		}
		row := []string{f.FileMode, formatSize(f.Size, human), formatTime(f.ModTime), name}
		if withType {
			row = append(row, orNone(f.ContentType))
		}
		rows = append(rows, row)
	}
	return formatTable(header, rows)
}

// formatSize renders a size in bytes, or with human set in binary units
// ("1.5 KiB").
func formatSize(n int64, human bool) string {
	if !human || n < 1024 {
		if human {
			return strconv.FormatInt(n, 10) + " B"
		}
		return strconv.FormatInt(n, 10)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	v := float64(n)
	u := -1
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}
