package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/inputlimit"
	"github.com/drover-io/drover/structs"
)

// decodeBody decodes the JSON request body into out. Unknown fields (named
// with their path, such as Job.TaskGroups[0].Cuont), a missing body,
// trailing data and nesting deeper than inputlimit.MaxNesting are errors
// that name the problem.
func decodeBody(req *http.Request, out any) error {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return err // *http.MaxBytesError when too large
	}
	if err := inputlimit.CheckJSON("", body, inputlimit.MaxNesting); err != nil {
		return structs.Invalid("request body: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.Is(err, io.EOF):
			return structs.Invalid("request body is empty: send a JSON object")
		case errors.As(err, &se):
			return structs.Invalid("request body is not valid JSON: %v (at byte %d)", err, se.Offset)
		case strings.HasPrefix(err.Error(), "json: unknown field"):
			if path := unknownField(body, reflect.TypeOf(out)); path != "" {
				return structs.Invalid("request body: unknown field %s: check its spelling and case", path)
			}
			return structs.Invalid("request body: %v", err)
		default:
			return structs.Invalid("request body: %v", err)
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return structs.Invalid("request body has data after the JSON object")
	}
	return nil
}

// unknownField returns the path of the first field of the JSON document
// that type t does not have ("Job.TaskGroups[0].Cuont"), or "".
func unknownField(doc []byte, t reflect.Type) string {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return ""
	}
	return findUnknown(v, t, "")
}

func findUnknown(v any, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch x := v.(type) {
	case map[string]any:
		switch t.Kind() {
		case reflect.Struct:
			if t == reflect.TypeFor[json.RawMessage]() {
				return ""
			}
			for _, key := range sortedKeys(x) {
				f, ok := jsonField(t, key)
				name := key
				if path != "" {
					name = path + "." + key
				}
				if !ok {
					return name
				}
				if p := findUnknown(x[key], f.Type, name); p != "" {
					return p
				}
			}
		case reflect.Map:
			for _, key := range sortedKeys(x) {
				if p := findUnknown(x[key], t.Elem(), fmt.Sprintf("%s[%q]", path, key)); p != "" {
					return p
				}
			}
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, e := range x {
				if p := findUnknown(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); p != "" {
					return p
				}
			}
		}
	}
	return ""
}

// jsonField finds the struct field that encoding/json decodes key into:
// an exact name match, else a case-insensitive one.
func jsonField(t reflect.Type, key string) (reflect.StructField, bool) {
	var fold reflect.StructField
	found := false
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag := f.Tag.Get("json"); tag != "" {
			if tag == "-" {
				continue
			}
			if n, _, _ := strings.Cut(tag, ","); n != "" {
				name = n
			}
		}
		if name == key {
			return f, true
		}
		if !found && strings.EqualFold(name, key) {
			fold, found = f, true
		}
	}
	return fold, found
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// queryOptions reads the common read parameters: namespace ("default"
// unless given; "*" is all), prefix, region, stale, the blocking-query
// pair index and wait, and the paging pair per_page and next_token.
func queryOptions(req *http.Request) (structs.QueryOptions, error) {
	q := req.URL.Query()
	opts := structs.QueryOptions{
		Region:    q.Get("region"),
		Namespace: namespaceParam(req),
		Prefix:    q.Get("prefix"),
	}
	if _, ok := q["stale"]; ok {
		opts.AllowStale = true
	}
	if v := q.Get("index"); v != "" {
		idx, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return opts, structs.Invalid("index %q is invalid: use a non-negative integer", v)
		}
		opts.MinQueryIndex = idx
	}
	if v := q.Get("wait"); v != "" {
		d, err := parseWait(v)
		if err != nil {
			return opts, err
		}
		opts.MaxQueryTime = d
	}
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return opts, structs.Invalid("per_page %q is invalid: use a positive integer", v)
		}
		opts.PerPage = int32(n)
	}
	opts.NextToken = q.Get("next_token")
	if opts.MinQueryIndex > 0 && opts.MaxQueryTime == 0 {
		opts.MaxQueryTime = structs.DefaultBlockingWait
	}
	opts.MaxQueryTime = min(opts.MaxQueryTime, structs.MaxBlockingWait)
	return opts, nil
}

// parseWait parses a blocking query's wait: a Go duration ("5s", "5000ms",
// as Nomad's clients send) or a bare number of seconds.
func parseWait(v string) (time.Duration, error) {
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, structs.Invalid("wait %q is invalid: use a duration such as 5s or 5000ms", v)
	}
	return d, nil
}

// writeRequest is the part of Nomad's write request bodies that names
// where the write goes (its api.WriteRequest): ?namespace= wins over the
// body's Namespace; the token travels in X-Nomad-Token.
type writeRequest struct {
	Region    string `json:",omitempty"`
	Namespace string `json:",omitempty"`
	SecretID  string `json:",omitempty"`
}

// namespace is the namespace of the write: ?namespace=, else the body's,
// else the default one.
func (w writeRequest) namespace(req *http.Request) string {
	return firstNonEmpty(req.URL.Query().Get("namespace"), w.Namespace, structs.DefaultNamespace)
}

// namespaceParam returns ?namespace, or the default namespace.
func namespaceParam(req *http.Request) string {
	if ns := req.URL.Query().Get("namespace"); ns != "" {
		return ns
	}
	return structs.DefaultNamespace
}

// boolParam reads an optional boolean query parameter.
func boolParam(req *http.Request, name string) (bool, error) {
	v, ok := req.URL.Query()[name]
	if !ok || len(v) == 0 || v[0] == "" {
		return ok, nil
	}
	b, err := strconv.ParseBool(v[0])
	if err != nil {
		return false, structs.Invalid("%s=%q is invalid: use true or false", name, v[0])
	}
	return b, nil
}

// intParam reads an optional integer query parameter, 0 when absent.
func intParam(req *http.Request, name string) (int, error) {
	v := req.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, structs.Invalid("%s=%q is invalid: use an integer", name, v)
	}
	return n, nil
}
