package inputlimit

import (
	"fmt"
	"strconv"
	"strings"
)

// CheckJSON refuses a JSON document whose objects and arrays nest deeper
// than max levels, with an *Error giving the line, column and path (such
// as Job.TaskGroups[0].Tasks[0].Config.a.a.a...) where it does. It
// checks nesting only: malformed JSON is left to the decoder to report.
// The scan is linear, allocates nothing unless it fails, and keeps one
// small frame per level.
func CheckJSON(filename string, src []byte, max int) error {
	// frames[i] is where the value at depth i+1 sits in its parent.
	type frame struct {
		object bool
		key    []byte // object: the last key read (raw, unescaped)
		index  int    // array: the index of the current element
		// wantKey: in an object, the next string is a key.
		wantKey bool
	}
	frames := make([]frame, 0, 16)
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			end := stringEnd(src, i+1)
			if n := len(frames); n > 0 && frames[n-1].object && frames[n-1].wantKey {
				frames[n-1].key = src[i+1 : min(end, len(src))]
				frames[n-1].wantKey = false
			}
			i = end
		case '{', '[':
			if len(frames) >= max {
				path := make([]string, 0, len(frames))
				for _, f := range frames {
					if f.object {
						path = append(path, jsonKey(f.key))
					} else {
						path = append(path, "["+strconv.Itoa(f.index)+"]")
					}
				}
				line, col := lineCol(src, i)
				return &Error{Filename: filename, Line: line, Column: col, Path: formatPath(path),
					Summary: "Nesting too deep",
					Detail:  fmt.Sprintf("JSON objects and arrays may nest at most %d levels deep; flatten the value", max)}
			}
			frames = append(frames, frame{object: c == '{', wantKey: c == '{'})
		case '}', ']':
			if len(frames) > 0 {
				frames = frames[:len(frames)-1]
			}
		case ',':
			if n := len(frames); n > 0 {
				if frames[n-1].object {
					frames[n-1].wantKey = true
				} else {
					frames[n-1].index++
				}
			}
		}
	}
	return nil
}

// stringEnd returns the index of the quote closing the JSON string whose
// content starts at i, or len(src) when it is not closed.
func stringEnd(src []byte, i int) int {
	for ; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(src)
}

// jsonKey renders an object key as a path element.
func jsonKey(raw []byte) string {
	const maxKey = 40
	k := string(raw)
	if len(k) > maxKey {
		k = k[:maxKey] + "..."
	}
	if k == "" || strings.ContainsAny(k, ".[]\" ") {
		return strconv.Quote(k)
	}
	return k
}

// formatPath joins path elements ("Job", "TaskGroups", "[0]") into
// Job.TaskGroups[0], keeping the first elements and the last two when it
// is long: the start names the field, the end the depth.
func formatPath(elems []string) string {
	const head, tail = 12, 2
	var b strings.Builder
	first := true
	for i, e := range elems {
		if len(elems) > head+tail+1 && i >= head && i < len(elems)-tail {
			if i == head {
				fmt.Fprintf(&b, "...(%d more)...", len(elems)-head-tail)
				first = true
			}
			continue
		}
		if !first && !strings.HasPrefix(e, "[") {
			b.WriteByte('.')
		}
		b.WriteString(e)
		first = false
	}
	return b.String()
}
