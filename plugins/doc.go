// Package plugins runs drover plugins as separate processes: Serve is the
// main of a plugin binary, Launch starts one from the agent and Reattach
// reconnects to one an earlier agent started. The transport is gRPC over
// hashicorp/go-plugin; the SDK's interfaces are in plugins/base and
// plugins/drivers, the wire protocol in plugins/drivers/proto.
//
// Where it sits in the data flow: the agent's driver manager Launches each
// external driver found in plugin_dir, persists Instance.ReattachConfig so
// that a restarted agent Reattaches to the still-running plugin (and its
// tasks), and hands Instance.Driver to task runners. A plugin binary's main
// is one line:
//
//	func main() { plugins.Serve(mydriver.New(logger), logger) }
//
// Device plugins (plugins/device) are served with ServeDevice and started
// with LaunchDevice; their transport is plugins/device/grpcdevice.
//
// A plugin should log JSON to its stderr (slog.NewJSONHandler(os.Stderr,
// nil)): the launcher turns each line back into a record of the agent's
// logger.
package plugins
