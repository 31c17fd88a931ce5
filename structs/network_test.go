package structs

import "testing"

func TestTaskGroupNetworkMode(t *testing.T) {
	cases := []struct {
		name string
		tg   *TaskGroup
		want string
	}{
		{"nil group", nil, NetworkModeHost},
		{"no network block", &TaskGroup{}, NetworkModeHost},
		{"empty mode", &TaskGroup{Networks: []*NetworkResource{{}}}, NetworkModeHost},
		{"none", &TaskGroup{Networks: []*NetworkResource{{Mode: NetworkModeNone}}}, NetworkModeNone},
		{"host", &TaskGroup{Networks: []*NetworkResource{{Mode: NetworkModeHost}}}, NetworkModeHost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.tg.NetworkMode(); got != tc.want {
				t.Errorf("NetworkMode() = %q, want %q", got, tc.want)
			}
		})
	}
}

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
