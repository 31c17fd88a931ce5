package keyring

import (
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/drover-io/drover/structs"
)

// The hand-off of the KEK from a server that has it to one that joined
// without it (structs.KEKHandoffRequest). The requester sends an
// ephemeral X25519 public key and a nonce, authenticated with a key
// derived from the servers' shared secret (the gossip key) when there is
// one; the responder checks that proof, makes its own ephemeral key and
// encrypts the KEK with AES-256-GCM under a key derived (HKDF-SHA256)
// from the X25519 shared secret, the shared secret and the nonce, bound
// to both public keys and the KEK's ID. Neither the KEK nor the shared
// secret crosses the network in the clear; someone who later learns the
// gossip key cannot open a recorded answer (the ephemeral keys are gone);
// a changed answer does not open.

// ErrHandoffAuth is what a hand-off request that does not prove the
// shared secret gets.
var ErrHandoffAuth = errors.New("the request does not prove the servers' gossip key")

const (
	handoffNonceSize = 32
	handoffMACInfo   = "drover kek hand-off request mac"
	handoffEncInfo   = "drover kek hand-off encryption"
)

// HandoffAsk is a requester's half of a hand-off: the request to send
// and the ephemeral key that opens the answer.
type HandoffAsk struct {
	priv   *ecdh.PrivateKey
	req    structs.KEKHandoffRequest
	secret []byte
}

// NewHandoffAsk returns a request for the KEK kekID, proved with secret
// (the gossip key; nil where TLS alone authenticates the servers).
func NewHandoffAsk(kekID string, secret []byte) (*HandoffAsk, error) {
	priv, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("make hand-off key: %w", err)
	}
	nonce := make([]byte, handoffNonceSize)
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("make hand-off nonce: %w", err)
	}
	a := &HandoffAsk{priv: priv, secret: secret, req: structs.KEKHandoffRequest{
		KEKID: kekID, RequesterKey: priv.PublicKey().Bytes(), Nonce: nonce}}
	if len(secret) > 0 {
		if a.req.MAC, err = handoffMAC(secret, &a.req); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Request returns the request to send.
func (a *HandoffAsk) Request() *structs.KEKHandoffRequest {
	r := a.req
	return &r
}

// Open returns the KEK that resp carries. An answer that was changed,
// that was not made for this request, or that holds another KEK than the
// one asked for is an error.
func (a *HandoffAsk) Open(resp *structs.KEKHandoffResponse) (*KEK, error) {
	peer, err := ecdh.X25519().NewPublicKey(resp.ResponderKey)
	if err != nil {
		return nil, fmt.Errorf("the answer's key is not an X25519 public key: %w", err)
	}
	aead, err := handoffAEAD(a.priv, peer, a.secret, &a.req, resp.ResponderKey)
	if err != nil {
		return nil, err
	}
	material, err := aead.Open(nil, nil, resp.Sealed, handoffAD(&a.req, resp.ResponderKey))
	if err != nil {
		return nil, fmt.Errorf("the answer does not open: it was changed, or made with another gossip key: %w", err)
	}
	k, err := NewKEK(material, "a peer server")
	if err != nil {
		return nil, err
	}
	if k.id != a.req.KEKID {
		return nil, fmt.Errorf("the answer holds key-encryption key %s, not %s", k.id, a.req.KEKID)
	}
	return k, nil
}

// AnswerHandoff answers req with the keyring's KEK, encrypted to the
// requester. secrets are the shared secrets the responder holds (its
// gossip keys, primary first): when there are any, req must prove one
// (ErrHandoffAuth otherwise), and that one is mixed into the encryption.
// With none, the caller must have been authenticated otherwise (a server
// certificate). A provisional KEK, or another KEK than the one asked
// for, is not handed over.
func (r *Keyring) AnswerHandoff(req *structs.KEKHandoffRequest, secrets [][]byte) (*structs.KEKHandoffResponse, error) {
	var secret []byte
	if len(secrets) > 0 {
		for _, s := range secrets {
			want, err := handoffMAC(s, req)
			if err != nil {
				return nil, err
			}
			if hmac.Equal(want, req.MAC) {
				secret = s
				break
			}
		}
		if secret == nil {
			return nil, ErrHandoffAuth
		}
	}
	if len(req.Nonce) != handoffNonceSize {
		return nil, fmt.Errorf("the request's nonce is %d bytes, not %d", len(req.Nonce), handoffNonceSize)
	}
	kek, provisional := r.currentKEK()
	if provisional || kek.id != req.KEKID {
		return nil, structs.NewError(structs.KindNotFound, "this server does not hold key-encryption key %s", req.KEKID)
	}
	peer, err := ecdh.X25519().NewPublicKey(req.RequesterKey)
	if err != nil {
		return nil, structs.Invalid("the request's key is not an X25519 public key: %v", err)
	}
	priv, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("make hand-off key: %w", err)
	}
	pub := priv.PublicKey().Bytes()
	aead, err := handoffAEAD(priv, peer, secret, req, pub)
	if err != nil {
		return nil, err
	}
	return &structs.KEKHandoffResponse{ResponderKey: pub,
		Sealed: aead.Seal(nil, nil, kek.material, handoffAD(req, pub))}, nil
}

// handoffMAC is the request's proof of secret.
func handoffMAC(secret []byte, req *structs.KEKHandoffRequest) ([]byte, error) {
	key, err := hkdf.Key(sha256.New, secret, nil, handoffMACInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("derive hand-off key: %w", err)
	}
	m := hmac.New(sha256.New, key)
	m.Write(handoffAD(req, nil))
	return m.Sum(nil), nil
}

// handoffAD binds what it covers to the KEK's ID, the request's key and
// nonce and (for the answer) the responder's key, each length-prefixed.
func handoffAD(req *structs.KEKHandoffRequest, responder []byte) []byte {
	var out []byte
	for _, f := range [][]byte{[]byte(req.KEKID), req.RequesterKey, req.Nonce, responder} {
		out = append(out, byte(len(f)>>8), byte(len(f)))
		out = append(out, f...)
	}
	return out
}

// handoffAEAD is the cipher of an answer: its key derived from the
// X25519 exchange of priv and peer and from secret, salted with the nonce
// and bound to both public keys.
func handoffAEAD(priv *ecdh.PrivateKey, peer *ecdh.PublicKey, secret []byte, req *structs.KEKHandoffRequest, responder []byte) (cipher.AEAD, error) {
	shared, err := priv.ECDH(peer)
	if err != nil {
		return nil, fmt.Errorf("hand-off key exchange: %w", err)
	}
	ikm := append(append([]byte{}, shared...), secret...)
	key, err := hkdf.Key(sha256.New, ikm, req.Nonce, handoffEncInfo+string(handoffAD(req, responder)), kekSize)
	if err != nil {
		return nil, fmt.Errorf("derive hand-off key: %w", err)
	}
	return newAEAD(key)
}
