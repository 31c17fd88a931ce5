package docker

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/plugins/base"
)

// schemaNames returns the dotted names of a schema's fields, nested ones
// included ("gc.image"); free-form blocks have no nested names.
func schemaNames(s *base.Schema, prefix string) []string {
	var out []string
	for _, f := range s.Fields {
		out = append(out, prefix+f.Name)
		if f.Block != nil {
			out = append(out, schemaNames(f.Block, prefix+f.Name+".")...)
		}
	}
	return out
}

// typeNames returns the dotted JSON names of a struct's fields, following
// nested structs and slices of structs (blocks); maps are free-form.
func typeNames(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out = append(out, prefix+name)
		ft := f.Type
		if ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft != reflect.TypeFor[Duration]() {
			out = append(out, typeNames(ft, prefix+name+".")...)
		}
	}
	return out
}

// TestSchemasMatchTypes: every option the driver decodes is in its schema
// (so that submit-time validation knows it) and nothing else is.
func TestSchemasMatchTypes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		schema *base.Schema
		typ    reflect.Type
	}{
		{"task", TaskConfigSchema(), reflect.TypeFor[TaskConfig]()},
		{"plugin", PluginConfigSchema(), reflect.TypeFor[Config]()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.schema.Check(); err != nil {
				t.Fatal(err)
			}
			got, want := schemaNames(tc.schema, ""), typeNames(tc.typ, "")
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("schema fields\n%q\ndiffer from the type's\n%q", got, want)
			}
		})
	}
}

// TestPluginSchemaDefaults: the defaults the schema documents are those
// the driver applies.
func TestPluginSchemaDefaults(t *testing.T) {
	t.Setenv("DOCKER_HOST", "")
	def := DefaultConfig()
	for _, f := range PluginConfigSchema().Fields {
		if f.Default == nil {
			continue
		}
		var got any
		switch f.Name {
		case "allow_privileged":
			got = def.AllowPrivileged
		case "allow_caps":
			got = def.AllowCaps
		case "infra_image":
			got = def.InfraImage
		case "infra_image_pull_timeout":
			got = def.InfraImagePullTimeout
		case "pull_activity_timeout":
			got = def.PullActivityTimeout
		case "pids_limit":
			got = def.PidsLimit
		case "default_network_mode":
			got = def.DefaultNetworkMode
		case "pull_timeout":
			got = def.PullTimeout
		case "fingerprint_period":
			got = def.FingerprintPeriod
		default:
			t.Fatalf("field %q has a default the test does not check", f.Name)
		}
		if d, ok := got.(Duration); ok {
			var want Duration
			if err := json.Unmarshal(f.Default, &want); err != nil || want != d {
				t.Errorf("%s: schema default %s, driver default %s", f.Name, f.Default, time.Duration(d))
			}
			continue
		}
		b, _ := json.Marshal(got)
		if string(b) != string(f.Default) {
			t.Errorf("%s: schema default %s, driver default %s", f.Name, f.Default, b)
		}
	}
	if !def.gcImage() || !def.gcContainer() || def.volumesEnabled() || def.Logging.Type != "json-file" || def.Logging.Config["max-file"] != "2" || def.Logging.Config["max-size"] != "2m" {
		t.Errorf("block defaults = gc %v/%v volumes %v logging %+v", def.gcImage(), def.gcContainer(), def.volumesEnabled(), def.Logging)
	}
	if !slices.Equal(DefaultAllowCaps, []string{"audit_write", "chown", "dac_override", "fowner", "fsetid", "kill", "mknod", "net_bind_service", "setfcap", "setgid", "setpcap", "setuid", "sys_chroot"}) {
		t.Errorf("DefaultAllowCaps = %q, want Nomad's", DefaultAllowCaps)
	}
}

// TestTaskConfigErrors: bad task configs are refused with the field named.
func TestTaskConfigErrors(t *testing.T) {
	cases := []struct {
		name, raw string
		want      []string
	}{
		{"unknown key", `{"image":"x","imagee":"y"}`, []string{`config field "imagee": unknown field`}},
		{"unknown nested key", `{"image":"x","auth":{"user":"u"}}`, []string{`config field "auth.user": unknown field; known fields: email, password, server_address, username`}},
		{"wrong type", `{"image":"x","pids_limit":"many","init":"yes"}`, []string{`"pids_limit": want int`, `"init": want bool`}},
		{"nomad option drover lacks", `{"image":"x","ipc_mode":"host","runtime":"runc"}`, []string{`config field "ipc_mode": a Nomad docker option drover does not support`, `config field "runtime"`}},
		{"bad duration", `{"image":"x","image_pull_timeout":"soon"}`, []string{`"image_pull_timeout": invalid duration`}},
		{"device without host path", `{"image":"x","devices":[{"container_path":"/dev/x"}]}`, []string{`"devices[0].host_path": required field is missing`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := specConfig(tc.raw)
			_, err := decodeTaskConfig(cfg, containerEnv(cfg.Env))
			var ce *base.ConfigError
			if err == nil || !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *base.ConfigError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestParsePluginConfig: Nomad's plugin block parses, with its defaults;
// bad values are refused naming the field.
func TestParsePluginConfig(t *testing.T) {
	t.Setenv("DOCKER_HOST", "")
	c, err := ParseConfig([]byte(`{
		"endpoint": "tcp://127.0.0.1:2376",
		"auth": [{"config": "/etc/docker-auth.json", "helper": "ecr-login"}],
		"tls": [{"cert": "/c.pem", "key": "/k.pem", "ca": "/ca.pem"}],
		"extra_labels": ["job_name", "task*"],
		"gc": [{"image": false, "image_delay": "10m", "container": false, "dangling_containers": [{"enabled": false}]}],
		"volumes": [{"enabled": true, "selinuxlabel": "z"}],
		"allow_privileged": true,
		"allow_caps": ["chown", "net_raw"],
		"infra_image": "pause:1",
		"pull_activity_timeout": "5m",
		"pids_limit": 100,
		"logging": [{"type": "local", "config": [{"max-size": "1m"}]}]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint != "tcp://127.0.0.1:2376" || c.Auth.Helper != "ecr-login" || c.TLS.CA != "/ca.pem" || c.gcImage() || c.gcContainer() ||
		c.GC.ImageDelay != Duration(10*60e9) || !c.volumesEnabled() || c.Volumes.SELinuxLabel != "z" || !c.AllowPrivileged ||
		!slices.Equal(c.AllowCaps, []string{"chown", "net_raw"}) || c.InfraImage != "pause:1" || c.PidsLimit != 100 ||
		c.Logging.Type != "local" || c.Logging.Config["max-size"] != "1m" {
		t.Fatalf("parsed = %+v", c)
	}
	for _, tc := range []struct{ raw, want string }{
		{`{"colour":"red"}`, `plugin "docker": config field "colour": unknown field`},
		{`{"gc":{"imag":true}}`, `config field "gc.imag": unknown field`},
		{`{"allow_caps":["chown","fly"]}`, `config field "allow_caps": unknown capabilities ["fly"]`},
		{`{"tls":{"cert":"/c.pem"}}`, `config field "tls": cert and key go together`},
		{`{"gc":{"dangling_containers":{"enabled":true}}}`, `config field "gc.dangling_containers.enabled": the dangling container reaper is not supported`},
		{`{"extra_labels":["nodes"]}`, `config field "extra_labels": "nodes" matches none`},
		{`{"auth":{"helper":"/bin/x"}}`, `config field "auth.helper"`},
		{`{"pull_activity_timeout":"soon"}`, `config field "pull_activity_timeout": invalid duration`},
	} {
		_, err := ParseConfig([]byte(tc.raw))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseConfig(%s) = %v, want %q", tc.raw, err, tc.want)
		}
	}
}
