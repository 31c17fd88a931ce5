package jobspec

import "testing"

func TestConfigPositions(t *testing.T) {
	src := []byte(`job "web" {
  group "g" {
    task "redis" {
      driver = "docker"
      config {
        image = "redis"
        auth_soft_fial = true
        labels = {
          team = "x"
        }
        mount {
          target = "/a"
        }
        mount {
          taget = "/b"
        }
      }
    }
  }
  group "h" {
    task "t" {
      driver = "raw_exec"
      config {
        comand = "/bin/true"
      }
    }
  }
}
`)
	positions := ConfigPositions("web.nomad.hcl", src)
	cases := []struct {
		key  ConfigKey
		want string
	}{
		{ConfigKey{"g", "redis", ""}, "web.nomad.hcl:5:7"},
		{ConfigKey{"g", "redis", "image"}, "web.nomad.hcl:6:9"},
		{ConfigKey{"g", "redis", "auth_soft_fial"}, "web.nomad.hcl:7:9"},
		{ConfigKey{"g", "redis", "labels.team"}, "web.nomad.hcl:9:11"},
		{ConfigKey{"g", "redis", "mount[0].target"}, "web.nomad.hcl:12:11"},
		{ConfigKey{"g", "redis", "mount.target"}, "web.nomad.hcl:12:11"},
		{ConfigKey{"g", "redis", "mount[1].taget"}, "web.nomad.hcl:15:11"},
		// A missing field points at the block that lacks it.
		{ConfigKey{"g", "redis", "mount[1].target"}, "web.nomad.hcl:14:9"},
		{ConfigKey{"h", "t", "command"}, "web.nomad.hcl:23:7"},
		{ConfigKey{"h", "t", "comand"}, "web.nomad.hcl:24:9"},
	}
	for _, tc := range cases {
		p, ok := ConfigPosition(positions, tc.key)
		if !ok || p.String() != tc.want {
			t.Errorf("ConfigPosition(%+v) = %v, %v; want %s", tc.key, p, ok, tc.want)
		}
	}
	if _, ok := ConfigPosition(positions, ConfigKey{"nope", "t", "x"}); ok {
		t.Error("a position for a task that is not in the file")
	}
	if ConfigPositions("web.json", []byte(`{"Job":{}}`)) != nil || ConfigPositions("bad.hcl", []byte(`job {`)) != nil {
		t.Error("positions for a JSON file or one that does not parse")
	}
}
