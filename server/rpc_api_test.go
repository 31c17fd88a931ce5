package server

import (
	"testing"

	"github.com/drover-io/drover/rpcapi"
)

// TestServerServesEveryMethod checks that the server binds every method
// rpcapi declares.
func TestServerServesEveryMethod(t *testing.T) {
	h := (&Server{}).newHandlers()
	for _, m := range rpcapi.All() {
		if !h.Serves(m) {
			t.Errorf("the server does not serve %s", m.Name())
		}
	}
}
