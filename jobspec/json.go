package jobspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"

	"github.com/drover-io/drover/api"
)

// parseJSON decodes a job in the JSON form of Nomad's API: either
// {"Job": {...}} (what `nomad job run -output` prints) or the job object
// itself. Fields drover does not know are ignored, as Nomad's API does.
func parseJSON(filename string, src []byte) (*api.Job, error) {
	var wrapper struct {
		Job json.RawMessage
	}
	if err := json.Unmarshal(src, &wrapper); err != nil {
		return nil, jsonError(filename, src, err)
	}
	body := src
	if len(wrapper.Job) > 0 && !bytes.Equal(wrapper.Job, []byte("null")) {
		body = wrapper.Job
	}
	var job api.Job
	if err := json.Unmarshal(body, &job); err != nil {
		// Positions are reported within the whole file.
		if len(body) != len(src) {
			err = offsetError(err, int64(bytes.Index(src, body)))
		}
		return nil, jsonError(filename, src, err)
	}
	if job.ID == nil || *job.ID == "" {
		return nil, &Error{Filename: filename, Summary: "Missing job ID", Detail: "The JSON job has no \"ID\"."}
	}
	if job.Name == nil {
		job.Name = api.String(*job.ID)
	}
	dropNullRaw(reflect.ValueOf(&job))
	return &job, nil
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// dropNullRaw clears the json.RawMessage fields that hold a JSON null, so
// that, as with HCL input, a feature that was not set reads as nil (Nomad's
// clients send every field, most of them null).
func dropNullRaw(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			dropNullRaw(v.Elem())
		}
	case reflect.Slice:
		if v.Type() == rawMessageType {
			if string(bytes.TrimSpace(v.Bytes())) == "null" {
				v.SetBytes(nil)
			}
			return
		}
		for i := 0; i < v.Len(); i++ {
			dropNullRaw(v.Index(i))
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				dropNullRaw(v.Field(i))
			}
		}
	}
}

// offsetError shifts the offset of a JSON error by delta.
func offsetError(err error, delta int64) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		c := *se
		c.Offset += delta
		return &c
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		c := *te
		c.Offset += delta
		return &c
	}
	return err
}

// jsonError turns a JSON decoding error into an *Error with a position.
func jsonError(filename string, src []byte, err error) error {
	e := &Error{Filename: filename, Summary: "Invalid JSON job", Detail: err.Error()}
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		// Offset is just after the offending byte; point at that byte,
		// or at the end when the input stops short.
		off = se.Offset - 1
		if off < 0 || strings.Contains(se.Error(), "unexpected end") {
			off = se.Offset
		}
	case errors.As(err, &te):
		off = te.Offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		off = int64(len(src))
	}
	if off >= 0 {
		if off > int64(len(src)) {
			off = int64(len(src))
		}
		e.Line, e.Column = lineCol(src[:off])
	}
	return e
}

// lineCol is the 1-based line and column just after prefix.
func lineCol(prefix []byte) (int, int) {
	line := 1 + bytes.Count(prefix, []byte("\n"))
	col := len(prefix) - bytes.LastIndexByte(prefix, '\n')
	return line, col
}
