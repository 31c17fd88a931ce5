package agent

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/drover-io/drover/client/rpcclient"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// A client-only agent calls the servers of client.servers and
// client.server_join (at their RPC ports), failing over between them
// (rpcclient). serverDiscovery keeps that list whole: it asks the servers
// for the region's servers (StatusServers) at start and then
// periodically, so that the client fails over to servers it was never
// told of, and it says clearly when none of them can be reached.

// discoveryInterval is how often a client refreshes its server list;
// discoveryRetry how soon it tries again while no server answers.
const (
	discoveryInterval = 30 * time.Second
	discoveryRetry    = 5 * time.Second
	discoveryTimeout  = 10 * time.Second
)

// serverDiscovery refreshes a client's server list. Its goroutine stops at
// stop, which waits for it.
type serverDiscovery struct {
	rc         *rpcclient.Client
	logger     *slog.Logger
	configured []string // client.servers and server_join's addresses
	retryMax   int      // server_join.retry_max: attempts before giving up warning (0: never)

	cancel context.CancelFunc
	done   chan struct{}
}

// startDiscovery starts refreshing rc's server list from the servers.
func startDiscovery(rc *rpcclient.Client, configured []string, retryMax int, logger *slog.Logger) *serverDiscovery {
	ctx, cancel := context.WithCancel(context.Background())
	d := &serverDiscovery{rc: rc, logger: logger, configured: configured, retryMax: retryMax, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(d.done)
		d.run(ctx)
	}()
	return d
}

// stop ends the refreshing and waits for it.
func (d *serverDiscovery) stop() {
	d.cancel()
	<-d.done
}

func (d *serverDiscovery) run(ctx context.Context) {
	failures := 0
	for {
		wait := discoveryInterval
		if err := d.refresh(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			wait = discoveryRetry
			level := slog.LevelWarn
			if d.retryMax > 0 && failures == d.retryMax {
				level = slog.LevelError
			}
			d.logger.Log(ctx, level, "no server reachable: the client cannot register or get its allocations until one answers; retrying",
				"servers", strings.Join(d.rc.Servers(), ", "), "attempt", failures, "error", err,
				"hint", "check client.servers / server_join addresses (RPC port, default 4647) and that the servers run")
		} else {
			failures = 0
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// refresh asks the servers for the region's servers and sets the list to
// them plus the configured ones.
func (d *serverDiscovery) refresh(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	resp, err := rpcapi.StatusServers.Call(ctx, d.rc, &structs.StatusServersRequest{})
	if err != nil {
		return err
	}
	list := slices.Clone(d.configured)
	for _, s := range resp.Servers {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	if slices.Equal(list, d.rc.Servers()) {
		return nil
	}
	if err := d.rc.SetServers(list); err != nil {
		return err
	}
	d.logger.Debug("refreshed the server list", "servers", strings.Join(d.rc.Servers(), ", "), "leader", resp.Leader)
	return nil
}
