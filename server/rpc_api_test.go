package server

import (
	"reflect"
	"testing"
)

// TestRPCHandlerServesEveryMethod checks that every method of ClientRPCs
// and APIRPCs is served under its own name when the handler's methods
// implement both (as *Server does), and that a handler of ClientRPCs only
// serves no API method.
func TestRPCHandlerServesEveryMethod(t *testing.T) {
	names := func(iface any) []string {
		typ := reflect.TypeOf(iface).Elem()
		out := make([]string, typ.NumMethod())
		for i := range out {
			out[i] = typ.Method(i).Name
		}
		return out
	}
	full := NewRPCHandler((*Server)(nil), nil).(*rpcHandler)
	for _, iface := range []any{(*ClientRPCs)(nil), (*APIRPCs)(nil)} {
		for _, name := range names(iface) {
			if full.methods[name] == nil {
				t.Errorf("the handler of a *Server does not serve %s", name)
			}
		}
	}
	clientOnly := NewRPCHandler(&fakeRPCs{}, nil).(*rpcHandler)
	for _, name := range names((*APIRPCs)(nil)) {
		if _, isClientRPC := reflect.TypeOf((*ClientRPCs)(nil)).Elem().MethodByName(name); isClientRPC {
			continue
		}
		if clientOnly.methods[name] != nil {
			t.Errorf("a ClientRPCs-only handler serves %s", name)
		}
	}
}
