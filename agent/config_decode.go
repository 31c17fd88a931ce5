package agent

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ConfigWarning is a Nomad setting that drover accepts and ignores: the
// agent logs one line per key (see LoadConfigFiles and the agent flags).
type ConfigWarning struct {
	// Key is the setting's path: "consul", "client.network_speed",
	// "client.options.docker.privileged.enabled".
	Key string
	// Where is "file:line:col", or the flag ("-consul-address").
	Where string
	// Reason says why it is ignored.
	Reason string
}

func (w ConfigWarning) String() string {
	return fmt.Sprintf("%s: %s is ignored: %s", w.Where, w.Key, w.Reason)
}

// keyFunc decodes one honoured key of a section.
type keyFunc func(d *decoder, it *cfgItem)

// section is one block of the schema: the keys drover honours, by name,
// with the functions that decode them into the file's config. The Nomad
// keys the block may hold and drover ignores are in nomadIgnored under
// path; any other key is an error.
type section struct {
	path string // "" for the top level, "client", "client.reserved"
	keys map[string]keyFunc
}

// decoder walks a file's tree against the schema. It collects every error
// (as "file:line:col: message") and the warnings for ignored keys.
type decoder struct {
	file     string
	errs     []string
	warnings []ConfigWarning
}

func (d *decoder) errorf(pos cfgPos, format string, args ...any) {
	d.errs = append(d.errs, d.where(pos)+": "+fmt.Sprintf(format, args...))
}

func (d *decoder) where(pos cfgPos) string {
	if pos.line == 0 {
		return d.file
	}
	return fmt.Sprintf("%s:%d:%d", d.file, pos.line, pos.col)
}

// dotted joins a section path and a key.
func dotted(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// bodies returns the object bodies of a block's value: one object, or a
// list of objects (JSON's form of a repeated block); null is none.
func (d *decoder) bodies(name string, v *cfgValue) []*cfgValue {
	switch v.kind {
	case kindObject:
		return []*cfgValue{v}
	case kindNull:
		return nil
	case kindList:
		var out []*cfgValue
		for _, e := range v.list {
			if e.kind != kindObject {
				d.errorf(e.pos, "%s must be a block (an object), not %s", name, e.kind)
				continue
			}
			out = append(out, e)
		}
		return out
	}
	d.errorf(v.pos, "%s must be a block (an object), not %s", name, v.kind)
	return nil
}

// decodeSection decodes a block's value against s.
func (d *decoder) decodeSection(s section, v *cfgValue) {
	for _, body := range d.bodies(sectionName(s.path), v) {
		for _, it := range body.items {
			key := dotted(s.path, it.key)
			if fn, ok := s.keys[it.key]; ok {
				fn(d, it)
				continue
			}
			if reason, ok := nomadIgnored[s.path][it.key]; ok {
				d.ignore(key, it, reason)
				continue
			}
			msg := fmt.Sprintf("unknown key %q %s", it.key, sectionPlace(s.path))
			if s := suggest(it.key, s.candidates()); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			d.errorf(it.pos, "%s (see docs/agent-config.md)", msg)
		}
	}
}

func sectionName(path string) string {
	if path == "" {
		return "the configuration"
	}
	return path
}

func sectionPlace(path string) string {
	if path == "" {
		return "at the top level"
	}
	return "in " + path
}

// candidates are the keys a section accepts, for "did you mean".
func (s section) candidates() []string {
	out := slices.Collect(maps.Keys(s.keys))
	for k := range nomadIgnored[s.path] {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ignore records the warning for a Nomad key drover ignores, unless the
// key turns something off (a boolean set to false, or a block that only
// says `enabled = false`): that is what drover does without the feature,
// so the setting is honoured as it is.
func (d *decoder) ignore(key string, it *cfgItem, reason string) {
	if isFalse(it.val) || onlyDisabled(it.val) {
		return
	}
	d.warnings = append(d.warnings, ConfigWarning{Key: key, Where: d.where(it.pos), Reason: reason})
}

func isFalse(v *cfgValue) bool {
	return v.kind == kindBool && v.text == "false"
}

// onlyDisabled reports whether v is a block whose only key is
// `enabled = false`.
func onlyDisabled(v *cfgValue) bool {
	if v.kind != kindObject || len(v.items) == 0 {
		return false
	}
	for _, it := range v.items {
		if it.key != "enabled" || !isFalse(it.val) {
			return false
		}
	}
	return true
}

// suggest returns the candidate closest to key when it is close enough to
// be a typo, else "".
func suggest(key string, candidates []string) string {
	best, bestDist := "", len(key)/3+2
	for _, c := range candidates {
		if d := editDistance(key, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// The typed readers below are as lenient as Nomad's HCL 1 decoder: a string
// key takes a number or a bool as its text, a number or bool key takes a
// string holding one (as JSON written by tools often does).

// scalar returns v's text when v is a string, number or bool.
func (d *decoder) scalar(key string, v *cfgValue, want string) (string, bool) {
	switch v.kind {
	case kindString, kindNumber, kindBool:
		return v.text, true
	}
	d.errorf(v.pos, "%s must be %s, not %s", key, want, v.kind)
	return "", false
}

func (d *decoder) str(key string, v *cfgValue) (string, bool) {
	return d.scalar(key, v, "a string")
}

func (d *decoder) integer(key string, v *cfgValue) (int, bool) {
	s, ok := d.scalar(key, v, "a number")
	if !ok {
		return 0, false
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 0); err == nil {
		return int(n), true
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= math.MaxInt32 {
		return int(f), true
	}
	d.errorf(v.pos, "%s = %q must be a whole number", key, s)
	return 0, false
}

func (d *decoder) float(key string, v *cfgValue) (float64, bool) {
	s, ok := d.scalar(key, v, "a number")
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		d.errorf(v.pos, "%s = %q must be a number", key, s)
		return 0, false
	}
	return f, true
}

func (d *decoder) boolean(key string, v *cfgValue) (bool, bool) {
	s, ok := d.scalar(key, v, "a bool")
	if !ok {
		return false, false
	}
	b, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		d.errorf(v.pos, "%s = %q must be true or false", key, s)
		return false, false
	}
	return b, true
}

func (d *decoder) duration(key string, v *cfgValue) (time.Duration, bool) {
	s, ok := d.str(key, v)
	if !ok {
		return 0, false
	}
	dur, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || dur < 0 {
		d.errorf(v.pos, "%s = %q is not a duration such as \"30s\" or \"5m\"", key, s)
		return 0, false
	}
	return dur, true
}

// strList reads a list of strings; a single string is a list of one.
func (d *decoder) strList(key string, v *cfgValue) ([]string, bool) {
	if v.kind != kindList {
		s, ok := d.scalar(key, v, "a list of strings")
		return []string{s}, ok
	}
	out := make([]string, 0, len(v.list))
	ok := true
	for _, e := range v.list {
		s, eok := d.scalar(key, e, "a list of strings")
		ok = ok && eok
		out = append(out, s)
	}
	return out, ok
}

// strMap reads `key { a = "1" }`, `key = { a = "1" }` or a JSON object
// into a map of strings; keys may be quoted and dotted.
func (d *decoder) strMap(key string, v *cfgValue) (map[string]string, map[string]cfgPos) {
	out := map[string]string{}
	where := map[string]cfgPos{}
	for _, body := range d.bodies(key, v) {
		for _, it := range body.items {
			name := it.key
			if len(it.labels) > 0 {
				d.errorf(it.pos, "%s.%s must be a string value, not a block", key, name)
				continue
			}
			if s, ok := d.str(dotted(key, name), it.val); ok {
				out[name] = s
				where[name] = it.pos
			}
		}
	}
	return out, where
}

// unlabelled reports an error and false when a key that takes no label
// has one (`client "x" { ... }`).
func (d *decoder) unlabelled(path string, it *cfgItem) bool {
	if len(it.labels) == 0 {
		return true
	}
	d.errorf(it.pos, "%s takes no label (found %q)", dotted(path, it.key), it.labels[0])
	return false
}

// The keyFunc constructors below set a pointer field of the file's config
// ("not set" stays nil, so that merging knows what a file sets).

func strKey(dst **string, path string) keyFunc {
	return func(d *decoder, it *cfgItem) {
		if !d.unlabelled(path, it) {
			return
		}
		if s, ok := d.str(dotted(path, it.key), it.val); ok {
			*dst = &s
		}
	}
}

func intKey(dst **int, path string) keyFunc {
	return func(d *decoder, it *cfgItem) {
		if !d.unlabelled(path, it) {
			return
		}
		if n, ok := d.integer(dotted(path, it.key), it.val); ok {
			*dst = &n
		}
	}
}

func floatKey(dst **float64, path string) keyFunc {
	return func(d *decoder, it *cfgItem) {
		if !d.unlabelled(path, it) {
			return
		}
		if f, ok := d.float(dotted(path, it.key), it.val); ok {
			*dst = &f
		}
	}
}

func boolKey(dst **bool, path string) keyFunc {
	return func(d *decoder, it *cfgItem) {
		if !d.unlabelled(path, it) {
			return
		}
		if b, ok := d.boolean(dotted(path, it.key), it.val); ok {
			*dst = &b
		}
	}
}

func durationKey(dst **time.Duration, path string) keyFunc {
	return func(d *decoder, it *cfgItem) {
		if !d.unlabelled(path, it) {
			return
		}
		if dur, ok := d.duration(dotted(path, it.key), it.val); ok {
			*dst = &dur
		}
	}
}

func strListKey(dst *[]string, path string) keyFunc {
	return func(d *decoder, it *cfgItem) {
		if !d.unlabelled(path, it) {
			return
		}
		if l, ok := d.strList(dotted(path, it.key), it.val); ok {
			*dst = l
		}
	}
}

// blockKey decodes a nested block; sec is called only when the block is
// present, so that it may allocate the block's struct.
func blockKey(sec func() section) keyFunc {
	return func(d *decoder, it *cfgItem) {
		s := sec()
		if len(it.labels) > 0 {
			d.errorf(it.pos, "%s takes no label (found %q)", s.path, it.labels[0])
			return
		}
		d.decodeSection(s, it.val)
	}
}

// labelledBlocks decodes `kind "NAME" { ... }` blocks. Each is handed to fn
// with its name; the JSON form `"kind": {"NAME": {...}}` (or a list of such
// objects) and HCL's `kind = { NAME = {...} }` are the same.
func labelledBlocks(kind string, fn func(d *decoder, name string, pos cfgPos, body *cfgValue)) keyFunc {
	return func(d *decoder, it *cfgItem) {
		switch {
		case len(it.labels) == 1:
			fn(d, it.labels[0], it.pos, it.val)
			return
		case len(it.labels) > 1:
			d.errorf(it.pos, "%s takes one label, its name: %s %q { ... }", kind, kind, it.labels[0])
			return
		case it.block:
			d.errorf(it.pos, "%s needs a name: %s \"NAME\" { ... }", kind, kind)
			return
		}
		for _, body := range d.bodies(kind, it.val) {
			for _, named := range body.items {
				if len(named.labels) > 0 {
					d.errorf(named.pos, "%s %q takes no further label", kind, named.key)
					continue
				}
				fn(d, named.key, named.pos, named.val)
			}
		}
	}
}

// freeform turns a free-form body (a plugin's config) into a JSON-ready
// value: an argument becomes its value; a nested HCL block becomes a list
// of objects under its name (a labelled one nests by label), the shape a
// task driver's config has in a job.
func (d *decoder) freeform(v *cfgValue) any {
	switch v.kind {
	case kindString:
		return v.text
	case kindBool:
		return v.text == "true"
	case kindNull:
		return nil
	case kindNumber:
		n := json.Number(v.text)
		if _, err := n.Float64(); err != nil {
			if i, err := strconv.ParseInt(v.text, 0, 64); err == nil { // HCL hex or octal
				return i
			}
			d.errorf(v.pos, "%s is not a number", v.text)
			return nil
		}
		return n
	case kindList:
		out := make([]any, 0, len(v.list))
		for _, e := range v.list {
			out = append(out, d.freeform(e))
		}
		return out
	}
	out := map[string]any{}
	for _, it := range v.items {
		val := d.freeform(it.val)
		if !it.block {
			if _, clash := out[it.key]; clash {
				d.errorf(it.pos, "%s is set twice; set it once", it.key)
				continue
			}
			out[it.key] = val
			continue
		}
		for i := len(it.labels) - 1; i >= 0; i-- {
			val = map[string]any{it.labels[i]: []any{val}}
		}
		list, isList := out[it.key].([]any)
		if _, clash := out[it.key]; clash && !isList {
			d.errorf(it.pos, "%s is set both as an argument and as a block; use one of them", it.key)
			continue
		}
		out[it.key] = append(list, val)
	}
	return out
}
