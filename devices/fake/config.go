package fake

import (
	"encoding/json"
	"fmt"

	"github.com/drover-io/drover/plugins/base"
)

// PluginName is the plugin's name in the agent's catalog and config.
const PluginName = "fake_device"

// Failure modes of the fake plugin (its fail_mode config field).
const (
	// FailNone: the plugin behaves.
	FailNone = ""
	// FailCrash: the plugin's streams end right after they start and
	// its calls fail, as if its process died.
	FailCrash = "crash"
	// FailHang: the plugin accepts calls and never answers them.
	FailHang = "hang"
	// FailBadOutput: the plugin fingerprints an unnamed group and a
	// duplicate device ID, reports stats for a device that does not
	// exist, and answers Reserve with an invalid mount.
	FailBadOutput = "bad_output"
)

// Config is the plugin's config block.
type Config struct {
	Vendor    string   `json:"vendor"`
	Type      string   `json:"type"`
	Name      string   `json:"name"`
	Instances []string `json:"instances"`
	// Attributes are the group's attributes as a person writes them
	// ("16 GiB"); each is parsed into a typed value with its unit.
	Attributes map[string]string `json:"attributes"`
	// Unhealthy lists instances reported unhealthy.
	Unhealthy []string `json:"unhealthy"`
	// FailMode is one of the Fail* constants.
	FailMode string `json:"fail_mode"`
}

func jsonOf(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// schema is the config block's schema, with the defaults of a two-GPU node.
func schema() *base.Schema {
	return &base.Schema{Fields: []*base.Field{
		{Name: "vendor", Type: base.TypeString, Default: jsonOf("drover"), Description: "vendor of the fake device group"},
		{Name: "type", Type: base.TypeString, Default: jsonOf("gpu"), Description: "type of the fake device group"},
		{Name: "name", Type: base.TypeString, Default: jsonOf("fake"), Description: "model name of the fake device group"},
		{Name: "instances", Type: base.TypeStringList, Default: jsonOf([]string{"fake-0", "fake-1"}), Description: "IDs of the fake instances"},
		{Name: "attributes", Type: base.TypeStringMap, Description: `group attributes, e.g. memory = "16 GiB"`},
		{Name: "unhealthy", Type: base.TypeStringList, Description: "instances reported unhealthy"},
		{Name: "fail_mode", Type: base.TypeString, Default: jsonOf(""), Description: `"", "crash", "hang" or "bad_output"`},
	}}
}

// check reports a config the plugin cannot run with.
func (c *Config) check() error {
	switch c.FailMode {
	case FailNone, FailCrash, FailHang, FailBadOutput:
	default:
		return fmt.Errorf("fail_mode %q: want \"\", %q, %q or %q", c.FailMode, FailCrash, FailHang, FailBadOutput)
	}
	return nil
}
