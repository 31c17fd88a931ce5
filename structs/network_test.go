package structs

import "testing"

func TestTaskGroupCopyNetworks(t *testing.T) {
	tg := &TaskGroup{Networks: []*NetworkResource{{Mode: NetworkModeNone}}}
	c := tg.Copy()
	c.Networks[0].Mode = NetworkModeHost
	if tg.Networks[0].Mode != NetworkModeNone {
		t.Fatal("Copy shares network blocks with the original")
	}
	if (&TaskGroup{}).Copy().Networks != nil {
		t.Fatal("Copy of a group without networks has networks")
	}
}
