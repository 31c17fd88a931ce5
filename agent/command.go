package agent

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// shutdownTimeout bounds a graceful shutdown after a signal.
const shutdownTimeout = 30 * time.Second

const agentUsage = `Usage: drover agent [options]

  Starts the drover agent and runs until it receives an interrupt (Ctrl-C)
  or SIGTERM. The agent runs a server, a client (node agent) or both, and
  serves the HTTP API that the CLI and Nomad-compatible API clients use.

  This version supports development mode only (-dev): one process that is
  both server and client, keeps its state in memory, and removes everything
  it ran when it stops. Cluster configuration (config files, -server,
  -client, -config) comes in a later version.

Options:
`

// RunCommand runs `drover agent` with args (the arguments after "agent")
// and returns the process exit code. It blocks until SIGINT or SIGTERM,
// then shuts the agent down gracefully.
func RunCommand(args []string, stdout, stderr io.Writer) int {
	sigCh := make(chan os.Signal, 2)
	signal.Notify(sigCh, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigCh)
	return runCommand(args, stdout, stderr, sigCh, nil)
}

// runCommand is RunCommand with its signals injected; started, when not
// nil, receives the agent once it serves (for tests).
func runCommand(args []string, stdout, stderr io.Writer, signals <-chan os.Signal, started chan<- *Agent) int {
	cfg, err := parseFlags(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	level, err := parseLogLevel(cfg.LogLevel)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	a, err := NewAgent(cfg, logger)
	if err != nil {
		fmt.Fprintf(stderr, "Error starting agent: %v\n", err)
		return 1
	}
	if err := a.Start(); err != nil {
		fmt.Fprintf(stderr, "Error starting agent: %v\n", err)
		if err := a.Shutdown(); err != nil {
			fmt.Fprintf(stderr, "Error shutting down: %v\n", err)
		}
		return 1
	}
	printBanner(stdout, cfg, a)
	if started != nil {
		started <- a
	}

	sig := <-signals
	fmt.Fprintf(stdout, "==> Caught signal: %v\n", sig)
	fmt.Fprintln(stdout, "==> Gracefully shutting down agent...")
	done := make(chan error, 1)
	go func() { done <- a.Shutdown() }()
	select {
	case err := <-done:
		if err != nil {
			fmt.Fprintf(stderr, "Error shutting down: %v\n", err)
			return 1
		}
	case sig := <-signals:
		fmt.Fprintf(stderr, "==> Caught second signal %v: exiting without waiting for shutdown\n", sig)
		return 1
	case <-time.After(shutdownTimeout):
		fmt.Fprintf(stderr, "Error shutting down: timed out after %s\n", shutdownTimeout)
		return 1
	}
	fmt.Fprintln(stdout, "==> Agent stopped")
	return 0
}

// parseFlags turns the command line into a Config.
func parseFlags(args []string, stdout, stderr io.Writer) (*Config, error) {
	cfg := DefaultConfig()
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&cfg.DevMode, "dev", false, "Start in development mode: server and client in one process, state in memory,\nraw_exec and mock_driver enabled. Required in this version.")
	fs.StringVar(&cfg.BindAddr, "bind", cfg.BindAddr, "The address the agent binds its HTTP API to.")
	fs.IntVar(&cfg.HTTPPort, "http-port", cfg.HTTPPort, "The HTTP API port; 0 picks a free port. (drover extension: Nomad sets it in\nthe config file's ports block)")
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "The directory for the agent's state. In -dev mode it is optional: without it\nallocation directories go to a temporary directory removed at shutdown.")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "The log level: debug, info, warn or error.")
	fs.StringVar(&cfg.Region, "region", cfg.Region, "The region the agent belongs to.")
	fs.StringVar(&cfg.Datacenter, "dc", cfg.Datacenter, "The datacenter of the agent's client.")
	fs.StringVar(&cfg.NodeName, "node", cfg.NodeName, "The name of the agent's client node.")
	fs.Usage = func() {
		fmt.Fprint(stdout, agentUsage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q: the agent takes only flags (see drover agent -h)", fs.Args())
	}
	if !cfg.DevMode {
		return nil, errors.New("only -dev mode is supported in this version of drover: run `drover agent -dev` (cluster configuration comes in a later version)")
	}
	if cfg.HTTPPort < 0 || cfg.HTTPPort > 65535 {
		return nil, fmt.Errorf("-http-port %d is out of range [0, 65535]", cfg.HTTPPort)
	}
	return cfg, nil
}

// parseLogLevel maps -log-level to a slog level.
func parseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug", "trace":
		return slog.LevelDebug, nil
	case "info", "":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error", "err":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("-log-level %q is invalid: use debug, info, warn or error", s)
}

// printBanner prints the agent's configuration once it serves.
func printBanner(w io.Writer, cfg *Config, a *Agent) {
	mode := ""
	if cfg.DevMode {
		mode = " (development mode: state is in memory and lost at shutdown)"
	}
	fmt.Fprintf(w, "==> drover agent configuration%s:\n\n", mode)
	rows := [][2]string{
		{"HTTP address", "http://" + a.HTTPAddr()},
		{"Version", Version},
		{"Region", fmt.Sprintf("%s (datacenter: %s)", cfg.Region, cfg.Datacenter)},
		{"Server", fmt.Sprint(a.ServerEnabled())},
		{"Client", fmt.Sprint(a.ClientEnabled())},
		{"Node name", cfg.NodeName},
		{"Node ID", a.NodeID()},
		{"Log level", strings.ToUpper(cfg.LogLevel)},
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%16s: %s\n", r[0], r[1])
	}
	fmt.Fprintln(w, "\n==> drover agent started! Log data will stream in below:")
}
