package keyring

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func mustKEK(t *testing.T) *KEK {
	t.Helper()
	k, err := GenerateKEK()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpen(t *testing.T) {
	kek := mustKEK(t)
	kr := New(kek)
	key, err := kr.NewRootKey(time.Unix(100, 0))
	if err != nil {
		t.Fatal(err)
	}
	if key.KEKID != kek.ID() || key.State != "active" || key.CreateTime != 100e9 || len(key.WrappedKey) == 0 {
		t.Fatalf("key = %+v", key)
	}
	if bytes.Contains(key.WrappedKey, []byte("secret")) {
		t.Fatal("wrapped key holds plaintext")
	}
	sealed, err := kr.Seal(key, []byte("secret"), []byte("ns\x00a/b"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("secret")) {
		t.Fatal("sealed data holds the plaintext")
	}
	// Another server with the same KEK and no cache unwraps the key.
	other := New(kek)
	out, err := other.Open(key, sealed, []byte("ns\x00a/b"))
	if err != nil || string(out) != "secret" {
		t.Fatalf("Open = %q, %v", out, err)
	}

	for name, tc := range map[string]struct {
		sealed, ad []byte
	}{
		"other record": {sealed, []byte("ns\x00a/c")},
		"damaged":      {append(append([]byte(nil), sealed[:len(sealed)-1]...), sealed[len(sealed)-1]^1), []byte("ns\x00a/b")},
		"truncated":    {sealed[:5], []byte("ns\x00a/b")},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := other.Open(key, tc.sealed, tc.ad); err == nil {
				t.Fatal("Open succeeded")
			}
		})
	}
}

func TestOtherKEKIsRefusedClearly(t *testing.T) {
	kr := New(mustKEK(t))
	key, err := kr.NewRootKey(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := kr.Seal(key, []byte("x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	stranger := New(mustKEK(t))
	_, err = stranger.Open(key, sealed, nil)
	if err == nil || !strings.Contains(err.Error(), "copy keyring.kek") || !strings.Contains(err.Error(), key.KEKID) {
		t.Fatalf("err = %v", err)
	}
	// A key whose KEK ID was changed does not unwrap with the other KEK.
	forged := key.Copy()
	forged.KEKID = stranger.KEKID()
	if _, err := stranger.Open(forged, sealed, nil); err == nil {
		t.Fatal("a key wrapped with another KEK unwrapped")
	}
	// Nor does a key whose ID was changed: the wrap is bound to it.
	moved := key.Copy()
	moved.KeyID = "00000000-0000-0000-0000-000000000000"
	if _, err := New(kr.kek).Open(moved, sealed, nil); err == nil {
		t.Fatal("a key renamed in the state unwrapped")
	}
}

// TestLoadKEK: a server without keyring.kek gets a provisional KEK,
// written to the file only when it wraps the first root key; then a
// reload reads the same KEK, no longer provisional.
func TestLoadKEK(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "server", "keyring.kek")
	k1, err := LoadKEK(path)
	if err != nil {
		t.Fatal(err)
	}
	kr := New(k1)
	if !kr.Provisional() {
		t.Fatal("a KEK made at this start is not provisional")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a provisional KEK was written before it wrapped anything: %v", err)
	}
	if _, err := kr.NewRootKey(time.Now()); err != nil {
		t.Fatal(err)
	}
	if kr.Provisional() {
		t.Fatal("the KEK is still provisional after wrapping a root key")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v", fi.Mode().Perm())
	}
	k2, err := LoadKEK(path)
	if err != nil {
		t.Fatal(err)
	}
	if k1.ID() != k2.ID() || New(k2).Provisional() {
		t.Fatalf("reloaded KEK %s (provisional %v), made %s", k2.ID(), New(k2).Provisional(), k1.ID())
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("left %d files", len(entries))
	}

	for name, tc := range map[string]struct {
		content string
		mode    os.FileMode
		want    string
	}{
		"world readable": {"AAAA", 0o644, "chmod 600"},
		"not base64":     {"!!!", 0o600, "not base64"},
		"short":          {"AAAA", 0o600, "must be 32"},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "keyring.kek")
			if err := os.WriteFile(p, []byte(tc.content), tc.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, tc.mode); err != nil {
				t.Fatal(err)
			}
			_, err := LoadKEK(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestPublicKeyIsTheSameOnEveryServer(t *testing.T) {
	kek := mustKEK(t)
	kr := New(kek)
	k1, err := kr.NewRootKey(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	k2, err := kr.NewRootKey(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p1, err := kr.PublicKey(k1)
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(kek).PublicKey(k1)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := kr.PublicKey(k2)
	if err != nil {
		t.Fatal(err)
	}
	if !p1.Equal(other) || p1.Equal(p2) || len(p1) != 32 {
		t.Fatalf("public keys: same key %x/%x, other key %x", p1, other, p2)
	}
}
