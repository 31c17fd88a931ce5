package api

import "net/http"

// KeyringRequest is the body of /v1/agent/keyring/install|use|remove.
type KeyringRequest struct {
	Key string
}

// KeyringResponse is what the servers' gossip pool answered: per key, how
// many members hold it; per member that failed, why.
type KeyringResponse struct {
	Messages map[string]string
	Keys     map[string]int
	NumNodes int
}

// ListKeys lists the gossip encryption keys of the servers' pool.
func (a *Agent) ListKeys() (*KeyringResponse, error) {
	var out KeyringResponse
	if _, err := a.c.query("/v1/agent/keyring/list", &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// InstallKey adds a gossip key to every server's keyring.
func (a *Agent) InstallKey(key string) (*KeyringResponse, error) { return a.keyringOp("install", key) }

// UseKey makes an installed gossip key the one that encrypts.
func (a *Agent) UseKey(key string) (*KeyringResponse, error) { return a.keyringOp("use", key) }

// RemoveKey removes a gossip key (not the one in use) from every keyring.
func (a *Agent) RemoveKey(key string) (*KeyringResponse, error) { return a.keyringOp("remove", key) }

func (a *Agent) keyringOp(op, key string) (*KeyringResponse, error) {
	var out KeyringResponse
	if _, err := a.c.write(http.MethodPut, "/v1/agent/keyring/"+op, &KeyringRequest{Key: key}, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}
