package structs

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Limits on the free-form parts of a job: a task's driver config, and the
// meta and env maps. They are checked when a job is validated, before it
// is proposed to raft, so that nothing is committed that the state store
// cannot encode and every server decode again on restart (raft entries
// are msgpack, whose decoder refuses values nested 1,024 levels deep).
// Real configs nest a handful of levels (config > mount > volume_options >
// driver_config > options) and weigh a few kilobytes.
const (
	// MaxFreeformDepth is how deep a task's config may nest maps and
	// lists; the config itself is level 1.
	MaxFreeformDepth = 32
	// MaxFreeformBytes bounds the size of one free-form value: a task's
	// config, or one meta or env map, counted as its keys' and strings'
	// bytes plus 8 bytes for every other value.
	MaxFreeformBytes = 1 << 20
)

// validateFreeform checks every free-form value of the job against the
// limits above; each problem names the value and where it goes wrong.
func (j *Job) validateFreeform() []error {
	var errs []error
	check := func(where string, v any) {
		if err := checkFreeform(where, v); err != nil {
			errs = append(errs, err)
		}
	}
	check("job meta", j.Meta)
	for i, tg := range j.TaskGroups {
		gname := tg.Name
		if gname == "" {
			gname = fmt.Sprintf("#%d", i+1)
		}
		check(fmt.Sprintf("group %q: meta", gname), tg.Meta)
		for k, t := range tg.Tasks {
			tname := t.Name
			if tname == "" {
				tname = fmt.Sprintf("#%d", k+1)
			}
			prefix := fmt.Sprintf("group %q, task %q: ", gname, tname)
			check(prefix+"config", t.Config)
			check(prefix+"env", t.Env)
			check(prefix+"meta", t.Meta)
		}
	}
	return errs
}

// checkFreeform checks one free-form value; where names it ("group "g",
// task "t": config"), and the last word of where starts the paths in
// messages (config.mount[0].options).
func checkFreeform(where string, v any) error {
	root := where[strings.LastIndex(where, " ")+1:]
	w := freeformWalker{limit: MaxFreeformBytes}
	w.walk(reflect.ValueOf(v), []string{root})
	switch {
	case w.deep != nil:
		return fmt.Errorf("%s is nested deeper than %d levels at %s: flatten it", where, MaxFreeformDepth, formatFreeformPath(w.deep))
	case w.size > w.limit:
		return fmt.Errorf("%s is larger than %d bytes (1 MiB): make it smaller", where, MaxFreeformBytes)
	}
	return nil
}

// freeformWalker measures a value made of maps, slices and scalars (what
// JSON and msgpack decode into an any), stopping at the first level too
// deep or once the size passes limit.
type freeformWalker struct {
	size, limit int
	deep        []string // the path of the first value too deep
}

func (w *freeformWalker) walk(v reflect.Value, path []string) {
	if w.deep != nil || w.size > w.limit {
		return
	}
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			w.size += 8
			return
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Map, reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			w.size += v.Len() // []byte is a string
			return
		}
		if len(path) > MaxFreeformDepth {
			w.deep = path
			return
		}
		if v.Kind() == reflect.Map {
			keys := v.MapKeys()
			sort.Slice(keys, func(a, b int) bool { return fmt.Sprint(keys[a]) < fmt.Sprint(keys[b]) })
			for _, k := range keys {
				name := fmt.Sprint(k)
				w.size += len(name)
				w.walk(v.MapIndex(k), append(path, name))
			}
			return
		}
		for i := range v.Len() {
			w.size += 8
			w.walk(v.Index(i), append(path, "["+strconv.Itoa(i)+"]"))
		}
	case reflect.String:
		w.size += v.Len()
	default:
		w.size += 8
	}
}

// formatFreeformPath renders a path as config.a[0].b, shortened in the
// middle when long.
func formatFreeformPath(path []string) string {
	const head, tail = 8, 2
	var b strings.Builder
	for i, e := range path {
		if len(path) > head+tail+1 && i >= head && i < len(path)-tail {
			if i == head {
				fmt.Fprintf(&b, "...(%d more)...", len(path)-head-tail)
			}
			continue
		}
		if i > 0 && !strings.HasPrefix(e, "[") && !strings.HasSuffix(b.String(), "...") {
			b.WriteByte('.')
		}
		b.WriteString(e)
	}
	return b.String()
}
