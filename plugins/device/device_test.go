package device

import (
	"strings"
	"testing"
)

func TestParseAttribute(t *testing.T) {
	cases := []struct {
		in   string
		want string // GoString of the result
		kind string
	}{
		{"16 GiB", "16 GiB", "int"},
		{"16GiB", "16 GiB", "int"},
		{"1.5 GHz", "1.5 GHz", "float"},
		{"42", "42", "int"},
		{"true", "true", "bool"},
		{"Tesla T4", "Tesla T4", "string"},
		{"16 apples", "16 apples", "string"},
		{"-3 C", "-3 C", "int"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			a := ParseAttribute(c.in)
			if err := a.Validate(); err != nil {
				t.Fatalf("invalid: %v", err)
			}
			if got := a.GoString(); got != c.want {
				t.Errorf("GoString = %q, want %q", got, c.want)
			}
			var kind string
			switch {
			case a.Int != nil:
				kind = "int"
			case a.Float != nil:
				kind = "float"
			case a.Bool != nil:
				kind = "bool"
			case a.String != nil:
				kind = "string"
			}
			if kind != c.kind {
				t.Errorf("kind = %s, want %s", kind, c.kind)
			}
		})
	}
}

func TestValidateFingerprint(t *testing.T) {
	good := func() *DeviceGroup {
		return &DeviceGroup{Vendor: "drover", Type: "gpu", Name: "fake",
			Devices:    []*Device{{ID: "a", Healthy: true}, {ID: "b"}},
			Attributes: map[string]*Attribute{"memory": NewIntAttribute(16, "GiB")}}
	}
	cases := []struct {
		name   string
		groups func() []*DeviceGroup
		want   string // substring of the error; "" for none
	}{
		{"ok", func() []*DeviceGroup { return []*DeviceGroup{good()} }, ""},
		{"empty vendor", func() []*DeviceGroup { g := good(); g.Vendor = ""; return []*DeviceGroup{g} }, "empty vendor, type or name"},
		{"empty name", func() []*DeviceGroup { g := good(); g.Name = ""; return []*DeviceGroup{g} }, "empty vendor, type or name"},
		{"duplicate id in group", func() []*DeviceGroup {
			g := good()
			g.Devices = append(g.Devices, &Device{ID: "a"})
			return []*DeviceGroup{g}
		}, `duplicate device ID "a"`},
		{"duplicate id across groups", func() []*DeviceGroup {
			g2 := good()
			g2.Name = "other"
			return []*DeviceGroup{good(), g2}
		}, `duplicate device ID "a"`},
		{"group twice", func() []*DeviceGroup {
			g2 := good()
			g2.Devices = []*Device{{ID: "c"}}
			return []*DeviceGroup{good(), g2}
		}, "declared twice"},
		{"empty id", func() []*DeviceGroup { g := good(); g.Devices[0].ID = ""; return []*DeviceGroup{g} }, "empty ID"},
		{"bad attribute", func() []*DeviceGroup {
			g := good()
			g.Attributes["x"] = &Attribute{}
			return []*DeviceGroup{g}
		}, `attribute "x": attribute has no value`},
		{"unknown unit", func() []*DeviceGroup {
			g := good()
			g.Attributes["x"] = NewIntAttribute(1, "furlong")
			return []*DeviceGroup{g}
		}, `unknown unit "furlong"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateFingerprint(c.groups())
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestFilterStats(t *testing.T) {
	v := int64(3)
	st := &DeviceStats{Summary: &StatValue{IntNumeratorVal: &v}}
	known := map[string]string{"a": "drover/gpu/fake", "b": "drover/gpu/fake"}
	in := []*DeviceGroupStats{
		{Vendor: "drover", Type: "gpu", Name: "fake", InstanceStats: map[string]*DeviceStats{"a": st, "ghost": st, "b": {}}},
		{Vendor: "drover", Type: "gpu", Name: "other", InstanceStats: map[string]*DeviceStats{"a": st}},
	}
	out, err := FilterStats(in, known)
	if len(out) != 1 || len(out[0].InstanceStats) != 1 || out[0].InstanceStats["a"] != st {
		t.Fatalf("kept %+v, want only a", out)
	}
	for _, want := range []string{`device "ghost"`, "no such device", `device "b"`, "no values", `belongs to "drover/gpu/fake"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

func TestValidateReservation(t *testing.T) {
	cases := []struct {
		name string
		r    *ContainerReservation
		want string
	}{
		{"nil", nil, "no reservation"},
		{"empty", &ContainerReservation{}, ""},
		{"ok", &ContainerReservation{Envs: map[string]string{"A": "1"},
			Mounts:  []*Mount{{TaskPath: "/t", HostPath: "/h"}},
			Devices: []*DeviceSpec{{TaskPath: "/dev/x", HostPath: "/dev/x", CgroupPerms: "rw"}}}, ""},
		{"mount without host", &ContainerReservation{Mounts: []*Mount{{TaskPath: "/t"}}}, "mount 0"},
		{"bad perms", &ContainerReservation{Devices: []*DeviceSpec{{TaskPath: "/d", HostPath: "/d", CgroupPerms: "rx"}}}, "bad cgroup permissions"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateReservation(c.r)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}
