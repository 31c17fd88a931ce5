package jobspec

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/drover-io/drover/inputlimit"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// moreFunctions are the functions of Nomad's job files that go-cty's
// standard library lacks: encodings, hashes, uuidv4, timestamp, and, when
// fsAllowed (the CLI, never POST /v1/jobs/parse, which runs on a server),
// file and fileexists, whose relative paths are from the current
// directory.
func moreFunctions(fsAllowed bool) map[string]function.Function {
	m := map[string]function.Function{
		"base64encode": stringFunc(func(s string) (string, error) { return base64.StdEncoding.EncodeToString([]byte(s)), nil }),
		"base64decode": stringFunc(func(s string) (string, error) {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return "", fmt.Errorf("not valid base64: %w", err)
			}
			if !utf8.Valid(b) {
				return "", errors.New("the decoded bytes are not valid UTF-8")
			}
			return string(b), nil
		}),
		"urlencode":              stringFunc(func(s string) (string, error) { return url.QueryEscape(s), nil }),
		"md5":                    hashFunc(md5.New),
		"sha1":                   hashFunc(sha1.New),
		"sha256":                 hashFunc(sha256.New),
		"sha512":                 hashFunc(sha512.New),
		"basename":               stringFunc(func(s string) (string, error) { return filepath.Base(s), nil }),
		"dirname":                stringFunc(func(s string) (string, error) { return filepath.Dir(s), nil }),
		"csvdecode":              stdlib.CSVDecodeFunc,
		"strlen":                 stdlib.StrlenFunc,
		"setsymmetricdifference": stdlib.SetSymmetricDifferenceFunc,
		"uuidv4": function.New(&function.Spec{
			Type: function.StaticReturnType(cty.String),
			Impl: func([]cty.Value, cty.Type) (cty.Value, error) {
				var b [16]byte
				if _, err := rand.Read(b[:]); err != nil {
					return cty.NilVal, err
				}
				b[6] = b[6]&0x0f | 0x40
				b[8] = b[8]&0x3f | 0x80
				h := hex.EncodeToString(b[:])
				return cty.StringVal(h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]), nil
			},
		}),
		"timestamp": function.New(&function.Spec{
			Type: function.StaticReturnType(cty.String),
			Impl: func([]cty.Value, cty.Type) (cty.Value, error) {
				return cty.StringVal(time.Now().UTC().Format(time.RFC3339)), nil
			},
		}),
	}
	if fsAllowed {
		m["file"] = stringFunc(func(path string) (string, error) {
			b, err := inputlimit.ReadFile(path, inputlimit.MaxHCLBytes)
			if err != nil {
				return "", fmt.Errorf("read %s: %w", path, err)
			}
			if !utf8.Valid(b) {
				return "", fmt.Errorf("%s is not UTF-8 text", path)
			}
			return string(b), nil
		})
		m["fileexists"] = function.New(&function.Spec{
			Params: []function.Parameter{{Name: "path", Type: cty.String}},
			Type:   function.StaticReturnType(cty.Bool),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				fi, err := os.Stat(args[0].AsString())
				switch {
				case errors.Is(err, fs.ErrNotExist):
					return cty.False, nil
				case err != nil:
					return cty.NilVal, err
				case !fi.Mode().IsRegular():
					return cty.NilVal, fmt.Errorf("%s is not a regular file", args[0].AsString())
				}
				return cty.True, nil
			},
		})
	}
	return m
}

// stringFunc is a function of one string returning a string.
func stringFunc(f func(string) (string, error)) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "str", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			s, err := f(args[0].AsString())
			if err != nil {
				return cty.NilVal, err
			}
			return cty.StringVal(s), nil
		},
	})
}

// hashFunc returns the hex digest of its string argument.
func hashFunc(h func() hash.Hash) function.Function {
	return stringFunc(func(s string) (string, error) {
		d := h()
		d.Write([]byte(s))
		return hex.EncodeToString(d.Sum(nil)), nil
	})
}
