package taskenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Interpolate replaces the ${...} references in s:
//
//	${VAR}, ${env["VAR"]}   env["VAR"]
//	${attr.x}               nodeAttrs["x"]
//	${node.x}               nodeAttrs["node.x"] (see NodeAttrs)
//	${meta.x}               nodeMeta["x"]
//
// A reference to an unknown name, or an unterminated one, is left as is.
func Interpolate(s string, env, nodeAttrs, nodeMeta map[string]string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		ref := s[i : i+2+j+1]
		b.WriteString(s[:i])
		if v, ok := lookup(s[i+2:i+2+j], env, nodeAttrs, nodeMeta); ok {
			b.WriteString(v)
		} else {
			b.WriteString(ref)
		}
		s = s[i+len(ref):]
	}
}

func lookup(name string, env, nodeAttrs, nodeMeta map[string]string) (string, bool) {
	name = strings.TrimSpace(name)
	switch {
	case strings.HasPrefix(name, "env[") && strings.HasSuffix(name, "]"):
		key := strings.Trim(name[len("env["):len(name)-1], `"' `)
		v, ok := env[key]
		return v, ok
	case strings.HasPrefix(name, "attr."):
		v, ok := nodeAttrs[strings.TrimPrefix(name, "attr.")]
		return v, ok
	case strings.HasPrefix(name, "node."):
		v, ok := nodeAttrs[name]
		return v, ok
	case strings.HasPrefix(name, "meta."):
		v, ok := nodeMeta[strings.TrimPrefix(name, "meta.")]
		return v, ok
	}
	v, ok := env[name]
	return v, ok
}

// InterpolateConfig returns a copy of v, a value decoded from JSON
// (map[string]any, []any, string, numbers, bools, or []string and
// map[string]string), with Interpolate applied to every string, map keys
// included. Other values are returned unchanged.
func InterpolateConfig(v any, env, nodeAttrs, nodeMeta map[string]string) any {
	switch t := v.(type) {
	case string:
		return Interpolate(t, env, nodeAttrs, nodeMeta)
	case []string:
		out := make([]string, len(t))
		for i, s := range t {
			out[i] = Interpolate(s, env, nodeAttrs, nodeMeta)
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(t))
		for k, s := range t {
			out[Interpolate(k, env, nodeAttrs, nodeMeta)] = Interpolate(s, env, nodeAttrs, nodeMeta)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = InterpolateConfig(e, env, nodeAttrs, nodeMeta)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[Interpolate(k, env, nodeAttrs, nodeMeta)] = InterpolateConfig(e, env, nodeAttrs, nodeMeta)
		}
		return out
	}
	return v
}

// InterpolateJSON applies InterpolateConfig to a JSON document (a driver's
// TaskConfig.RawConfig) and returns the re-encoded document. Numbers keep
// their exact text.
func InterpolateJSON(raw json.RawMessage, env, nodeAttrs, nodeMeta map[string]string) (json.RawMessage, error) {
	if len(raw) == 0 {
		return raw, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("interpolate config: %w", err)
	}
	out, err := json.Marshal(InterpolateConfig(v, env, nodeAttrs, nodeMeta))
	if err != nil {
		return nil, fmt.Errorf("interpolate config: %w", err)
	}
	return out, nil
}
