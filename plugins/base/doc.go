// Package base is what every drover plugin implements whatever its type:
// it says what it is (PluginInfo), what configuration it accepts
// (ConfigSchema) and takes that configuration (SetConfig).
//
// Where it sits in the data flow: the agent reads `plugin "name" { config
// {...} }` blocks, validates each against the plugin's Schema (errors name
// the plugin and the field), and hands the result with the driver-relevant
// agent settings to the plugin's SetConfig before using it as a driver or a
// device. Driver plugins (plugins/drivers) embed BasePlugin.
//
// This package must not import drover's internals: it is the SDK's boundary.
package base
