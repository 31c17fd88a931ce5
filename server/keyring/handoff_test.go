package keyring

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
)

// TestHandoff: a provisional keyring adopts the KEK a peer hands over
// (and writes it to its file), and then opens the root keys the peer
// wrapped; a request without the shared secret, a changed answer and an
// answer for another request are refused.
func TestHandoff(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	peer := New(mustKEK(t))
	root, err := peer.NewRootKey(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := peer.Seal(root, []byte("s3cret"), []byte("ad"))
	if err != nil {
		t.Fatal(err)
	}

	path := filepath.Join(t.TempDir(), "server", KEKFileName)
	prov, err := LoadKEK(path)
	if err != nil {
		t.Fatal(err)
	}
	joiner := New(prov)
	if _, err := joiner.Open(root, sealed, []byte("ad")); structs.KindOf(err) != structs.KindUnavailable {
		t.Fatalf("open before the hand-off: %v, want unavailable", err)
	}

	ask, err := NewHandoffAsk(root.KEKID, secret)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := peer.AnswerHandoff(ask.Request(), [][]byte{[]byte("an-older-gossip-key-0123456789ab"), secret})
	if err != nil {
		t.Fatal(err)
	}
	kek, err := ask.Open(resp)
	if err != nil {
		t.Fatal(err)
	}
	if err := joiner.Adopt(kek); err != nil {
		t.Fatal(err)
	}
	got, err := joiner.Open(root, sealed, []byte("ad"))
	if err != nil || string(got) != "s3cret" {
		t.Fatalf("open after the hand-off: %q, %v", got, err)
	}
	onDisk, err := LoadKEK(path)
	if err != nil || onDisk.ID() != root.KEKID || New(onDisk).Provisional() {
		t.Fatalf("the adopted KEK on disk: %v, %v", onDisk, err)
	}
	if err := joiner.Adopt(mustKEK(t)); err == nil {
		t.Fatal("an adopted KEK was replaced again")
	}

	t.Run("refused", func(t *testing.T) {
		for name, tc := range map[string]struct {
			req     func() *structs.KEKHandoffRequest
			secrets [][]byte
			want    string
		}{
			"wrong secret": {
				req: func() *structs.KEKHandoffRequest {
					a, _ := NewHandoffAsk(root.KEKID, []byte("another-gossip-key-0123456789abc"))
					return a.Request()
				},
				secrets: [][]byte{secret}, want: ErrHandoffAuth.Error(),
			},
			"no proof": {
				req: func() *structs.KEKHandoffRequest {
					a, _ := NewHandoffAsk(root.KEKID, nil)
					return a.Request()
				},
				secrets: [][]byte{secret}, want: ErrHandoffAuth.Error(),
			},
			"proof of another KEK ID": {
				req: func() *structs.KEKHandoffRequest {
					r := ask.Request()
					r.KEKID = "0011223344556677"
					return r
				},
				secrets: [][]byte{secret}, want: ErrHandoffAuth.Error(),
			},
			"a KEK this server does not hold": {
				req: func() *structs.KEKHandoffRequest {
					a, _ := NewHandoffAsk("0011223344556677", secret)
					return a.Request()
				},
				secrets: [][]byte{secret}, want: "does not hold",
			},
		} {
			t.Run(name, func(t *testing.T) {
				r, err := peer.AnswerHandoff(tc.req(), tc.secrets)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("answer %+v, %v; want an error with %q", r, err, tc.want)
				}
			})
		}
		if _, err := New(mustProvisional(t)).AnswerHandoff(ask.Request(), [][]byte{secret}); err == nil {
			t.Fatal("a provisional KEK was handed over")
		}
	})

	t.Run("tampered answer", func(t *testing.T) {
		for name, change := range map[string]func(r *structs.KEKHandoffResponse){
			"sealed bit": func(r *structs.KEKHandoffResponse) { r.Sealed[len(r.Sealed)-1] ^= 1 },
			"responder key": func(r *structs.KEKHandoffResponse) {
				other, _ := NewHandoffAsk(root.KEKID, secret)
				r.ResponderKey = other.Request().RequesterKey
			},
		} {
			t.Run(name, func(t *testing.T) {
				a, err := NewHandoffAsk(root.KEKID, secret)
				if err != nil {
					t.Fatal(err)
				}
				r, err := peer.AnswerHandoff(a.Request(), [][]byte{secret})
				if err != nil {
					t.Fatal(err)
				}
				change(r)
				if k, err := a.Open(r); err == nil {
					t.Fatalf("a changed answer opened: KEK %s", k.ID())
				}
			})
		}
		a, _ := NewHandoffAsk(root.KEKID, secret)
		if _, err := a.Open(resp); err == nil {
			t.Fatal("the answer to another request opened")
		}
		// An answer around another KEK than the one asked for (a peer
		// that holds another) does not open as the KEK asked for.
		liar := New(mustKEK(t))
		if _, err := liar.NewRootKey(time.Now()); err != nil {
			t.Fatal(err)
		}
		la, _ := NewHandoffAsk(liar.KEKID(), secret)
		lr, err := liar.AnswerHandoff(la.Request(), [][]byte{secret})
		if err != nil {
			t.Fatal(err)
		}
		la.req.KEKID = root.KEKID
		if _, err := la.Open(lr); err == nil {
			t.Fatal("an answer for another KEK ID opened")
		}
	})
}

func mustProvisional(t *testing.T) *KEK {
	t.Helper()
	k, err := GenerateProvisionalKEK()
	if err != nil {
		t.Fatal(err)
	}
	return k
}
