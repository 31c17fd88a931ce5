package logmonitor

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// timeFormat is the lines' time stamp, as Nomad's logs write it.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// componentKey is the attribute that names the part of the agent that
// logs ("http", "client"): the text format puts it before the message.
const componentKey = "component"

// encodings caches one record's formatted lines, by format.
type encodings struct {
	lines [4][]byte // by formatIndex
}

func formatIndex(o Options) int {
	i := 0
	if o.JSON {
		i |= 1
	}
	if o.IncludeLocation {
		i |= 2
	}
	return i
}

// get returns r formatted for o, formatting it on first use.
func (e *encodings) get(h *handler, r slog.Record, o Options) []byte {
	i := formatIndex(o)
	if e.lines[i] == nil {
		if o.JSON {
			e.lines[i] = formatJSON(h, r, o.IncludeLocation)
		} else {
			e.lines[i] = formatText(h, r, o.IncludeLocation)
		}
	}
	return e.lines[i]
}

// levelName is the level as Nomad's logs name it.
func levelName(l slog.Level) string {
	switch {
	case l < slog.LevelDebug:
		return "TRACE"
	case l < slog.LevelInfo:
		return "DEBUG"
	case l < slog.LevelWarn:
		return "INFO"
	case l < slog.LevelError:
		return "WARN"
	default:
		return "ERROR"
	}
}

// recordAttrs returns the handler's and the record's attributes, flat,
// and the component among them (which is left out of the list).
func recordAttrs(h *handler, r slog.Record) (attrs []slog.Attr, component string) {
	all := make([]slog.Attr, 0, len(h.attrs)+r.NumAttrs())
	all = append(all, h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		all = append(all, prefixed(h.group, []slog.Attr{a})...)
		return true
	})
	attrs = all[:0]
	for _, a := range all {
		if a.Key == componentKey && component == "" {
			component = a.Value.String()
			continue
		}
		attrs = append(attrs, a)
	}
	return attrs, component
}

// source returns "file:line" of the record's caller, "" when unknown.
func source(r slog.Record) string {
	if r.PC == 0 {
		return ""
	}
	f, _ := runtime.CallersFrames([]uintptr{r.PC}).Next()
	if f.File == "" {
		return ""
	}
	file := f.File
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		if j := strings.LastIndexByte(file[:i], '/'); j >= 0 {
			file = file[j+1:]
		}
	}
	return file + ":" + strconv.Itoa(f.Line)
}

// formatText formats r as "<time> [LEVEL] <component>: <message>:
// key=value ...\n".
func formatText(h *handler, r slog.Record, location bool) []byte {
	attrs, component := recordAttrs(h, r)
	var b strings.Builder
	b.WriteString(r.Time.Format(timeFormat))
	b.WriteString(" [")
	b.WriteString(levelName(r.Level))
	b.WriteString("] ")
	if location {
		if src := source(r); src != "" {
			b.WriteString(src)
			b.WriteString(": ")
		}
	}
	if component != "" {
		b.WriteString(component)
		b.WriteString(": ")
	}
	b.WriteString(r.Message)
	for i, a := range attrs {
		if i == 0 {
			b.WriteString(":")
		}
		b.WriteByte(' ')
		b.WriteString(a.Key)
		b.WriteByte('=')
		b.WriteString(quoteIfNeeded(valueString(a.Value)))
	}
	b.WriteByte('\n')
	return []byte(b.String())
}

// formatJSON formats r as a JSON object with Nomad's keys (@timestamp,
// @level, @module, @message, @caller) and the attributes, and a newline.
func formatJSON(h *handler, r slog.Record, location bool) []byte {
	attrs, component := recordAttrs(h, r)
	obj := make(map[string]any, len(attrs)+5)
	for _, a := range attrs {
		obj[a.Key] = jsonValue(a.Value)
	}
	obj["@timestamp"] = r.Time.Format(timeFormat)
	obj["@level"] = strings.ToLower(levelName(r.Level))
	obj["@message"] = r.Message
	if component != "" {
		obj["@module"] = component
	}
	if location {
		if src := source(r); src != "" {
			obj["@caller"] = src
		}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"@level": "error", "@message": fmt.Sprintf("log line not encodable: %v", err)})
	}
	return append(b, '\n')
}

// valueString renders a value for the text format.
func valueString(v slog.Value) string {
	switch v.Kind() {
	case slog.KindTime:
		return v.Time().Format(timeFormat)
	case slog.KindDuration:
		return v.Duration().String()
	default:
		return v.String()
	}
}

// jsonValue is a value as JSON encodes it best.
func jsonValue(v slog.Value) any {
	switch v.Kind() {
	case slog.KindString:
		return v.String()
	case slog.KindInt64:
		return v.Int64()
	case slog.KindUint64:
		return v.Uint64()
	case slog.KindFloat64:
		return v.Float64()
	case slog.KindBool:
		return v.Bool()
	case slog.KindDuration:
		return v.Duration().String()
	case slog.KindTime:
		return v.Time().Format(time.RFC3339Nano)
	default:
		if err, ok := v.Any().(error); ok {
			return err.Error()
		}
		if _, err := json.Marshal(v.Any()); err == nil {
			return v.Any()
		}
		return v.String()
	}
}

// quoteIfNeeded quotes s when it is empty or holds spaces, quotes, '=' or
// control characters.
func quoteIfNeeded(s string) string {
	if s == "" {
		return `""`
	}
	for _, c := range s {
		if unicode.IsSpace(c) || c == '"' || c == '=' || !unicode.IsPrint(c) {
			return strconv.Quote(s)
		}
	}
	return s
}
