package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"syscall"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/logx"
	"github.com/torii-browser/torii/internal/team/replica"
	"github.com/torii-browser/torii/internal/version"
)

func runServe(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "serve", "serve [--team] [--listen ADDR] [--verbose] [--log-file F]\n\nRuns the daemon in the foreground until SIGINT or SIGTERM.\nWith --team, runs one replica of the team gateway (config.json \"team\"; docs/team.md).")
	team := fs.Bool("team", false, "run one replica of the team gateway (config.json \"team\": store, bus, tls)")
	listen := fs.String("listen", "", "address to listen on (default: config \"listen\", else "+config.DefaultListen+")")
	verbose := fs.Bool("verbose", false, "log at debug level, including link frames (never secrets)")
	logFile := fs.String("log-file", "", "write the log to this file, rotated by size (10 MiB, 3 kept), instead of standard error")
	if err := parse(fs, s, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: "serve takes no arguments"}
	}
	p, err := paths()
	if err != nil {
		return err
	}
	cfg, err := config.Load(p)
	if err != nil {
		return err
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	if *team {
		return runTeam(ctx, s, p, cfg, *verbose)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	var out io.Writer = s.Err
	if *logFile != "" {
		// SECURITY I-50: the background daemon's log rotates; its standard
		// error follows the current file, so a crash report lands there too.
		lf, err := logx.OpenFile(*logFile, 0, 0, redirectStderr)
		if err != nil {
			return err
		}
		defer lf.Close()
		out = lf
	}
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: level}))

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	scheme := "http"
	if cfg.TLSCert != "" {
		scheme = "https"
	}
	ready := make(chan string, 1)
	go func() {
		select {
		case addr := <-ready:
			fmt.Fprintf(s.Err, "torii: serving on %s://%s (state: %s)\n", scheme, addr, p.StateDir)
		case <-ctx.Done():
		}
	}()
	discovery, _ := config.DiscoveryFile()
	err = daemon.Run(ctx, daemon.Options{Paths: p, Config: cfg, Logger: logger, Version: version.Version, Ready: ready, DiscoveryFile: discovery})
	var ar *daemon.AlreadyRunningError
	if errors.As(err, &ar) {
		return err
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return nil // a signal asked us to stop
	}
	return err
}

// runTeam is `torii serve --team`: one replica of the team gateway. It logs
// to standard error (a container's log) and exits 0 after SIGTERM's drain.
func runTeam(ctx context.Context, s Stdio, p config.Paths, cfg config.Config, verbose bool) error {
	t, err := cfg.TeamConfig(nil)
	if err != nil {
		return err
	}
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewJSONHandler(s.Err, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ready := make(chan string, 1)
	go func() {
		select {
		case addr := <-ready:
			fmt.Fprintf(s.Err, "torii: team replica %s serving on %s\n%s", t.Replica, addr, teamAddresses(t))
		case <-ctx.Done():
		}
	}()
	return replica.Run(ctx, replica.Options{Config: cfg, Team: t, Paths: p, Logger: logger, Version: version.Version, Ready: ready})
}

// teamAddresses is what the operator passes on when a replica starts: where
// browsers and agents connect (team.publicURL), or how to say so.
func teamAddresses(t config.Team) string {
	u, ok := t.URLs()
	if !ok {
		return "torii: team.publicURL is not set: set it in config.json to the address browsers and agents use (e.g. \"publicURL\": \"https://torii.example.com\"), so replicas can name it\n"
	}
	return fmt.Sprintf("torii: browsers connect to %s (the extension's address field, or `torii launch --server %s`)\n"+
		"torii: agents connect to %s with a user token (`torii admin token new --user NAME`)\n", u.ACP, u.URL, u.MCP)
}
