package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// parsedFile is one decoded config file.
type parsedFile struct {
	path   string
	format configFormat
	cfg    fileConfig
	// plugins holds each plugin block's config as JSON, by plugin name.
	plugins map[string]json.RawMessage
	// warnings are the Nomad keys the file sets that drover ignores.
	warnings []ConfigWarning
}

// loadConfigPaths reads each path in order: a file (HCL or JSON, whatever
// its name), or a directory whose .hcl and .json files are read in lexical
// order. Later files win when merged.
func loadConfigPaths(paths []string) ([]*parsedFile, error) {
	var out []*parsedFile
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("read config: %w", err)
		}
		files := []string{p}
		if info.IsDir() {
			entries, err := os.ReadDir(p)
			if err != nil {
				return nil, fmt.Errorf("read config directory: %w", err)
			}
			files = files[:0]
			for _, e := range entries {
				ext := filepath.Ext(e.Name())
				if e.Type().IsRegular() && (ext == ".hcl" || ext == ".json") {
					files = append(files, filepath.Join(p, e.Name()))
				}
			}
			sort.Strings(files)
		}
		for _, f := range files {
			pf, err := parseConfigFile(f)
			if err != nil {
				return nil, err
			}
			out = append(out, pf)
		}
	}
	return out, nil
}

// parseConfigFile decodes one file; an unknown key, a wrong type or a
// malformed file is an error naming file:line:col.
func parseConfigFile(path string) (*parsedFile, error) {
	src, err := readConfigFile(path) // config_limits.go
	if err != nil {
		return nil, err
	}
	return parseConfig(path, src)
}

// parseConfig decodes src, read from path. Its syntax is decided by its
// content (see detectFormat), never by the file name.
func parseConfig(path string, src []byte) (*parsedFile, error) {
	if err := checkConfigLimits(path, src); err != nil { // config_limits.go
		return nil, err
	}
	tree, format, err := parseSyntax(src)
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) && se.pos.line > 0 {
			return nil, fmt.Errorf("invalid agent configuration: %s:%d:%d: %s (the file is read as %s)", path, se.pos.line, se.pos.col, se.msg, formatOf(src))
		}
		return nil, fmt.Errorf("invalid agent configuration: %s: %v (the file is read as %s)", path, err, formatOf(src))
	}
	pf := &parsedFile{path: path, format: format}
	d := &decoder{file: path}
	d.decodeSection(pf.topSection(), tree)
	if len(d.errs) > 0 {
		return nil, fmt.Errorf("invalid agent configuration: %s", strings.Join(d.errs, "\n"))
	}
	pf.warnings = d.warnings
	return pf, nil
}

// formatOf names the syntax src is read as, for error messages.
func formatOf(src []byte) configFormat { return detectFormat(src) }
