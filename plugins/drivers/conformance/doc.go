// Package conformance is a test harness any task driver can run against
// itself, in process or over the plugin transport, to check that it keeps
// the drivers.DriverPlugin contract the client relies on: exits are
// reported once, stops and destroys behave, unknown tasks give
// drivers.ErrTaskNotFound, waits and streams end with their context.
//
// Where it sits in the data flow: nowhere at run time. A driver's tests
// call RunConformance with a constructor and a Spec of three task configs
// in the driver's own config format:
//
//	func TestConformance(t *testing.T) {
//		conformance.RunConformance(t, func(t *testing.T) drivers.DriverPlugin {
//			return mydriver.New(nil)
//		}, &conformance.Spec{
//			RunForever: json.RawMessage(`{"command":"sleep","args":["1000"]}`),
//			ExitZero:   json.RawMessage(`{"command":"true"}`),
//			ExitThree:  json.RawMessage(`{"command":"sh","args":["-c","exit 3"]}`),
//		})
//	}
package conformance
