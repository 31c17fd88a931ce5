package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/drover-io/drover/logmonitor"
	"github.com/drover-io/drover/structs"
)

// monitorSettings tune the log stream of GET /v1/agent/monitor; tests
// shrink them.
type monitorSettings struct {
	// buffer is how many lines may wait for one reader (its
	// subscription's buffer); more are dropped and counted.
	buffer int
	// heartbeat is how often an idle JSON stream sends an empty frame,
	// so that a dead connection is noticed.
	heartbeat time.Duration
	// write bounds one write to the reader: a reader that stops reading
	// is cut off, and its subscription removed.
	write time.Duration
}

func defaultMonitorSettings() monitorSettings {
	return monitorSettings{buffer: logmonitor.DefaultBuffer, heartbeat: 10 * time.Second, write: 10 * time.Second}
}

// monitorFrameSize bounds the data of one frame: queued lines are sent
// together up to it.
const monitorFrameSize = 64 << 10

// agentMonitor is GET /v1/agent/monitor?log_level=&log_json=&
// log_include_location=&plain=&node_id=: the agent's log lines at
// log_level (default info) as they are logged, from the moment of the
// request, as StreamFrame JSON objects whose Data holds lines (raw text
// with plain=true). A ?node_id of another node is served by that node's
// agent (client_forward.go). Lines the reader was too slow for are dropped
// and a warning line says how many.
func (s *Server) agentMonitor(w http.ResponseWriter, req *http.Request) {
	if s.monitor == nil {
		writeError(w, req, newHTTPError(http.StatusNotImplemented, "this agent does not stream its logs"))
		return
	}
	opts, plain, err := monitorRequest(req)
	if err != nil {
		writeError(w, req, err)
		return
	}
	opts.Buffer = s.monitorSet.buffer
	sub := s.monitor.Subscribe(opts)
	defer sub.Close()

	rc := http.NewResponseController(w)
	var emit func(data []byte) error
	if plain {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		emit = func(data []byte) error {
			if len(data) == 0 {
				return nil // no heartbeats in plain text
			}
			_, err := w.Write(data)
			return err
		}
	} else {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		emit = func(data []byte) error { return enc.Encode(streamFrame{Data: data}) }
	}
	send := func(data []byte) error {
		_ = rc.SetWriteDeadline(time.Now().Add(s.monitorSet.write))
		if err := emit(data); err != nil {
			return err
		}
		return flush(rc)
	}
	w.WriteHeader(http.StatusOK)
	if err := flush(rc); err != nil {
		return
	}
	heartbeat := time.NewTicker(s.monitorSet.heartbeat)
	defer heartbeat.Stop()
	ctx := req.Context()
	for {
		var data []byte
		select {
		case <-ctx.Done():
			return
		case <-heartbeat.C:
		case <-sub.Drops():
		case line := <-sub.Lines():
			data = append(data, line...)
			data = drainLines(sub, data)
		}
		if n := sub.TakeDropped(); n > 0 {
			data = append(data, sub.DroppedNotice(n, time.Now())...)
		}
		if err := send(data); err != nil {
			s.logger.Debug("monitor stream ended", "error", err)
			return
		}
	}
}

// drainLines appends the lines already queued to data, up to
// monitorFrameSize.
func drainLines(sub *logmonitor.Subscription, data []byte) []byte {
	for len(data) < monitorFrameSize {
		select {
		case line := <-sub.Lines():
			data = append(data, line...)
		default:
			return data
		}
	}
	return data
}

// monitorRequest reads a monitor request's parameters.
func monitorRequest(req *http.Request) (logmonitor.Options, bool, error) {
	var opts logmonitor.Options
	level, err := logmonitor.ParseLevel(req.URL.Query().Get("log_level"))
	if err != nil {
		return opts, false, structs.Invalid("log_level: %v", err)
	}
	opts.Level = level
	if opts.JSON, err = boolParam(req, "log_json"); err != nil {
		return opts, false, err
	}
	if opts.IncludeLocation, err = boolParam(req, "log_include_location"); err != nil {
		return opts, false, err
	}
	plain, err := boolParam(req, "plain")
	if err != nil {
		return opts, false, err
	}
	return opts, plain, nil
}
