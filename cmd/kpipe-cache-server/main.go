// Command kpipe-cache-server is kpipe's shared cache server for a CI
// fleet: it speaks the protocol `kpipe build --remote-cache http://...`
// speaks (GET, HEAD and PUT on /ac/<hex> and /cas/<hex>) and keeps what it
// is sent in a Badger database that it owns for as long as it runs
// (package cache/server; docs/cache-server.md).
//
//	kpipe-cache-server --dir DIR [--listen ADDR] [--max-size 10GiB]
//	    [--read-token-file F] [--write-token-file F] [--tls-cert F --tls-key F]
//
// `kpipe cache serve ARGS...` hands over to it with the same arguments
// (it finds it next to kpipe, then on PATH). It is a binary of its own so
// that kpipe, started thousands of times a day as a short process, does
// not link Badger and pay for its initialisation (cache/doc.go); release
// archives and the container image carry both.
//
// It imports cache/server (and through it cache and cache/badger) and
// internal/bytesize.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/cache/server"
	"github.com/kpipe/kpipe/internal/bytesize"
)

// Version is the server's version; release builds set it with -ldflags,
// as kpipe's.
var Version = "v0.1.0-dev"

// name is the command's name, in its log lines and messages.
const name = "kpipe-cache-server"

// defaultPort is the port when --listen does not name one.
const defaultPort = "8780"

func main() {
	os.Exit(run(context.Background(), os.Args, os.Stdout, os.Stderr))
}

// usageError is a mistake in the arguments: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg + "\n(see '" + name + " --help')" }

// run runs the server with the given arguments and returns the exit
// status: 0 once stopped by a signal (or ctx), 1 on an error, 2 on a usage
// error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := &cli.App{
		Name:      name,
		Usage:     "serve a shared kpipe cache to a CI fleet: the protocol kpipe's --remote-cache http://... speaks, stored in a Badger database (runs until SIGTERM or Ctrl-C, then drains the requests in flight)",
		UsageText: name + " --dir DIR [options]\nkpipe cache serve --dir DIR [options]   (the same: kpipe hands over to " + name + ")",
		Version:   Version,
		Writer:    stdout,
		ErrWriter: stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "the server's store directory (created 0700; one server at a time); required"},
			&cli.StringFlag{Name: "listen", Usage: "address to listen on (default 127.0.0.1:" + defaultPort + ", or :" + defaultPort + " with TLS and tokens)"},
			&cli.StringFlag{Name: "max-size", Value: "10GiB", Usage: "bound the store's disk to this size: the least recently used objects are evicted to stay under it"},
			&cli.StringFlag{Name: "max-object", Value: "64MiB", Usage: "refuse uploads bigger than this (413)"},
			&cli.StringFlag{Name: "read-token-file", Usage: "file of bearer tokens (one a line) that may read"},
			&cli.StringFlag{Name: "write-token-file", Usage: "file of bearer tokens (one a line) that may read and write"},
			&cli.StringFlag{Name: "tls-cert", Usage: "serve HTTPS with this certificate (PEM; with --tls-key)"},
			&cli.StringFlag{Name: "tls-key", Usage: "the certificate's private key (PEM)"},
			&cli.DurationFlag{Name: "request-timeout", Value: 2 * time.Minute, Usage: "bound on reading a request's body and writing its answer"},
		},
		HideHelpCommand: true,
		ExitErrHandler:  func(*cli.Context, error) {}, // run prints errors once
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			msg := strings.Replace(err.Error(), "flag provided but not defined: -", "unknown flag: --", 1)
			return usageError{msg}
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError{fmt.Sprintf("unexpected argument %q: the server takes flags only", c.Args().First())}
			}
			cfg := config{
				dir: c.String("dir"), listen: c.String("listen"),
				readTokens: c.String("read-token-file"), writeTokens: c.String("write-token-file"),
				tlsCert: c.String("tls-cert"), tlsKey: c.String("tls-key"),
				timeout: c.Duration("request-timeout"),
			}
			if cfg.dir == "" {
				return usageError{"--dir is required"}
			}
			var err error
			if cfg.maxSize, err = bytesize.Parse(c.String("max-size")); err != nil {
				return usageError{"--max-size: " + err.Error()}
			}
			if cfg.maxObject, err = bytesize.Parse(c.String("max-object")); err != nil {
				return usageError{"--max-object: " + err.Error()}
			}
			return serve(c.Context, cfg, stderr)
		},
	}
	if err := app.RunContext(ctx, args); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

// config is what the flags say.
type config struct {
	dir, listen             string
	maxSize, maxObject      int64
	readTokens, writeTokens string // files
	tlsCert, tlsKey         string
	timeout                 time.Duration
}

// stopSignals end the server cleanly: SIGINT (Ctrl-C), SIGTERM (what
// systemd, Kubernetes and CI cancellation send) and SIGHUP (a closed
// terminal; on Windows, the console's close).
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// serve runs the cache server until ctx is done or a stop signal comes,
// then drains the requests in flight and closes the store. It logs to
// log: one line saying where it listens and who may connect, and what
// goes wrong.
func serve(ctx context.Context, cfg config, log io.Writer) error {
	o := server.Options{Dir: cfg.dir, MaxSize: cfg.maxSize, MaxObject: cfg.maxObject, BodyTimeout: cfg.timeout,
		Log: func(msg string) { fmt.Fprintln(log, name+": "+msg) }}
	var err error
	if cfg.readTokens != "" {
		if o.ReadTokens, err = server.ReadTokenFile(cfg.readTokens); err != nil {
			return err
		}
	}
	if cfg.writeTokens != "" {
		if o.WriteTokens, err = server.ReadTokenFile(cfg.writeTokens); err != nil {
			return err
		}
	}
	var tlsConf *tls.Config
	switch {
	case (cfg.tlsCert == "") != (cfg.tlsKey == ""):
		return usageError{"--tls-cert and --tls-key go together"}
	case cfg.tlsCert != "":
		cert, err := tls.LoadX509KeyPair(cfg.tlsCert, cfg.tlsKey)
		if err != nil {
			return fmt.Errorf("--tls-cert %s, --tls-key %s: %v", cfg.tlsCert, cfg.tlsKey, err)
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	tokens := len(o.ReadTokens)+len(o.WriteTokens) > 0
	listen := cfg.listen
	if listen == "" {
		listen = "127.0.0.1:" + defaultPort
		if tlsConf != nil && tokens {
			listen = ":" + defaultPort
		}
	}
	srv, err := server.Open(o)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", listen)
	if err != nil {
		srv.Close()
		return fmt.Errorf("--listen %s: %v", listen, unwrapOp(err))
	}
	fmt.Fprintln(log, name+": "+exposure(l.Addr(), cfg.dir, tlsConf != nil, o)+" (store: "+srv.Store()+")")
	ctx, stop := signal.NotifyContext(ctx, stopSignals...)
	defer stop()
	if err := srv.Serve(ctx, l, tlsConf); err != nil {
		return err
	}
	fmt.Fprintln(log, name+": stopped; the store is closed")
	return nil
}

// exposure is the start-up line: where the server listens, and who can
// reach and use it.
func exposure(addr net.Addr, dir string, tlsOn bool, o server.Options) string {
	scheme := "http"
	if tlsOn {
		scheme = "https"
	}
	loopback := false
	if ta, ok := addr.(*net.TCPAddr); ok {
		loopback = ta.IP.IsLoopback()
	}
	var who string
	switch tokens := len(o.ReadTokens)+len(o.WriteTokens) > 0; {
	case tokens && tlsOn:
		who = fmt.Sprintf("tokens needed (%d read, %d write), over TLS", len(o.ReadTokens), len(o.WriteTokens))
	case tokens && loopback:
		who = fmt.Sprintf("tokens needed (%d read, %d write); only this machine can connect (no TLS: --listen and --tls-cert to serve others)", len(o.ReadTokens), len(o.WriteTokens))
	case tokens:
		who = fmt.Sprintf("tokens needed (%d read, %d write), but WITHOUT TLS: tokens and objects cross the network in clear text (--tls-cert, --tls-key)", len(o.ReadTokens), len(o.WriteTokens))
	case loopback:
		who = "no tokens: only this machine can connect, and it may read and write (--listen with tokens and TLS to serve others)"
	default:
		who = "NO TOKENS: anyone who can reach this address may read and write (--read-token-file, --write-token-file)"
	}
	return fmt.Sprintf("serving %s on %s://%s; %s", dir, scheme, addr, who)
}

// unwrapOp drops the *net.OpError's operation and address (the message
// names the address already).
func unwrapOp(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Err
	}
	return err
}
