package grpcdriver

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	gproto "google.golang.org/protobuf/proto"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/proto"
)

// wire sends m through protobuf's binary encoding.
func wire[M gproto.Message](t *testing.T, m M, out M) M {
	t.Helper()
	b, err := gproto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := gproto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestConvert_HandleRoundTrip(t *testing.T) {
	full := &drivers.TaskConfig{
		ID: "a/web/1", JobName: "j", JobID: "j", TaskGroupName: "g", Name: "web", Namespace: "default",
		AllocID: "a", User: "nobody", Env: map[string]string{"A": "1"},
		Resources: &drivers.Resources{CPUShares: 100, MemoryMB: 64, MemoryMaxMB: 128},
		AllocDir:  "/alloc", TaskDir: drivers.TaskDir{Dir: "/alloc/web", LocalDir: "/alloc/web/local",
			SecretsDir: "/alloc/web/secrets", SharedDir: "/alloc/alloc", LogDir: "/alloc/alloc/logs"},
		StdoutPath: "/o", StderrPath: "/e", LogMaxFiles: 3, LogMaxFileSizeMB: 10, KillSignal: "SIGTERM",
		RawConfig: json.RawMessage(`{"a":1}`), NetworkMode: "none",
		Ports:            []*drivers.PortMapping{{Label: "http", HostIP: "10.0.0.1", Value: 23456, To: 80}, {Label: "admin", HostIP: "::1", Value: 9000}},
		NetworkIsolation: &drivers.NetworkIsolationSpec{Path: "/var/lib/drover/netns/a1", IP: "172.26.64.2"},
	}
	cases := []struct {
		name string
		h    *drivers.TaskHandle
	}{
		{"full", &drivers.TaskHandle{Version: 2, Config: full, State: "running", DriverState: []byte("x")}},
		{"unset", &drivers.TaskHandle{Config: &drivers.TaskConfig{ID: "a/web/1"}}},
		{"zero resources and empty config", &drivers.TaskHandle{Config: &drivers.TaskConfig{
			ID: "a/web/1", Resources: &drivers.Resources{}, RawConfig: json.RawMessage{}}, DriverState: []byte{}}},
		{"no config", &drivers.TaskHandle{Version: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := handleFromProto(wire(t, handleToProto(tc.h), &proto.TaskHandle{}))
			if !reflect.DeepEqual(got, tc.h) {
				t.Fatalf("round trip:\n got %#v\nwant %#v", got, tc.h)
			}
		})
	}
}

func TestConvert_StatusRoundTrip(t *testing.T) {
	started := time.Unix(1700000000, 123).UTC()
	cases := []struct {
		name string
		st   *drivers.TaskStatus
	}{
		{"running", &drivers.TaskStatus{ID: "a/web/1", Name: "web", State: "running", StartedAt: started}},
		{"exited 0", &drivers.TaskStatus{ID: "x", State: "exited", StartedAt: started, CompletedAt: started.Add(time.Second),
			ExitResult: &drivers.ExitResult{}, DriverAttributes: map[string]string{"pid": "1"}}},
		{"exited with error", &drivers.TaskStatus{ID: "x", ExitResult: &drivers.ExitResult{ExitCode: 137, Signal: 9, OOMKilled: true,
			Err: errors.New("lost")}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := taskStatusFromProto(wire(t, taskStatusToProto(tc.st), &proto.TaskStatus{}))
			if tc.st.ExitResult != nil && tc.st.ExitResult.Err != nil {
				if got.ExitResult.Err == nil || got.ExitResult.Err.Error() != tc.st.ExitResult.Err.Error() {
					t.Fatalf("exit error = %v, want %v", got.ExitResult.Err, tc.st.ExitResult.Err)
				}
				got.ExitResult.Err = tc.st.ExitResult.Err
			}
			if !reflect.DeepEqual(got, tc.st) {
				t.Fatalf("round trip:\n got %#v\nwant %#v", got, tc.st)
			}
		})
	}
}

func TestConvert_UsageRoundTrip(t *testing.T) {
	u := &drivers.TaskResourceUsage{Timestamp: 5, CPUPercent: 1.5, CPUTotalTicks: 10, MemoryRSS: 1 << 20,
		MemoryCache: 2, MemorySwap: 3, MemoryMaxUsage: 4,
		Pids: map[string]*drivers.TaskResourceUsage{"42": {Timestamp: 5, MemoryRSS: 7}}}
	got := usageFromProto(wire(t, usageToProto(u), &proto.TaskResourceUsage{}))
	if !reflect.DeepEqual(got, u) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", got, u)
	}
}

func TestConvert_CapabilitiesRoundTrip(t *testing.T) {
	for _, c := range []*drivers.Capabilities{
		{SendSignals: true, Exec: true, FSIsolation: "none", MountConfigs: drivers.MountConfigSupportNone},
		{FSIsolation: "chroot", MountConfigs: drivers.MountConfigSupportAll},
		{},
	} {
		got := capabilitiesFromProto(wire(t, capabilitiesToProto(c), &proto.Capabilities{}))
		if !reflect.DeepEqual(got, c) {
			t.Errorf("round trip:\n got %#v\nwant %#v", got, c)
		}
	}
	// A value this client does not know (a newer plugin's) reads as "all".
	if got := capabilitiesFromProto(&proto.Capabilities{MountConfigs: proto.MountConfigs(7)}); got.MountConfigs != drivers.MountConfigSupportAll {
		t.Errorf("unknown mount_configs = %v, want all", got.MountConfigs)
	}
}
