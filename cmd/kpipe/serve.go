package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os/signal"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/cache/server"
)

// defaultServePort is kpipe cache serve's port when --listen does not
// name one.
const defaultServePort = "8780"

func cacheServeCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve a shared cache to a CI fleet: the protocol --remote-cache http://... speaks, stored in a Badger database (runs until SIGTERM or Ctrl-C)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Required: true, Usage: "the server's store directory (created 0700; one server at a time)"},
			&cli.StringFlag{Name: "listen", Usage: "address to listen on (default 127.0.0.1:" + defaultServePort + ", or :" + defaultServePort + " with TLS and tokens)"},
			&cli.StringFlag{Name: "max-size", Value: "10GiB", Usage: "bound the store to this size: the least recently used objects are evicted to stay under it"},
			&cli.StringFlag{Name: "max-object", Value: "64MiB", Usage: "refuse uploads bigger than this (413)"},
			&cli.StringFlag{Name: "read-token-file", Usage: "file of bearer tokens (one a line) that may read"},
			&cli.StringFlag{Name: "write-token-file", Usage: "file of bearer tokens (one a line) that may read and write"},
			&cli.StringFlag{Name: "tls-cert", Usage: "serve HTTPS with this certificate (PEM; with --tls-key)"},
			&cli.StringFlag{Name: "tls-key", Usage: "the certificate's private key (PEM)"},
			&cli.DurationFlag{Name: "request-timeout", Value: 2 * time.Minute, Usage: "bound on reading a request's body and writing its answer"},
		},
		Action: func(c *cli.Context) error {
			cfg := serveConfig{
				dir: c.String("dir"), listen: c.String("listen"),
				readTokens: c.String("read-token-file"), writeTokens: c.String("write-token-file"),
				tlsCert: c.String("tls-cert"), tlsKey: c.String("tls-key"),
				timeout: c.Duration("request-timeout"),
			}
			var err error
			if cfg.maxSize, err = parseSize(c.String("max-size")); err != nil {
				return fmt.Errorf("--max-size: %w", err)
			}
			if cfg.maxObject, err = parseSize(c.String("max-object")); err != nil {
				return fmt.Errorf("--max-object: %w", err)
			}
			return serveCache(c.Context, cfg, c.App.ErrWriter)
		},
	}
}

// serveConfig is what kpipe cache serve's flags say.
type serveConfig struct {
	dir, listen             string
	maxSize, maxObject      int64
	readTokens, writeTokens string // files
	tlsCert, tlsKey         string
	timeout                 time.Duration
}

// serveCache runs the cache server until ctx is done or a stop signal
// comes, then drains the requests in flight and closes the store. It
// logs to log: one line saying where it listens and who may connect,
// and what goes wrong.
func serveCache(ctx context.Context, cfg serveConfig, log io.Writer) error {
	o := server.Options{Dir: cfg.dir, MaxSize: cfg.maxSize, MaxObject: cfg.maxObject, BodyTimeout: cfg.timeout,
		Log: func(msg string) { fmt.Fprintln(log, "kpipe cache serve: "+msg) }}
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
		return errors.New("--tls-cert and --tls-key go together")
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
		listen = "127.0.0.1:" + defaultServePort
		if tlsConf != nil && tokens {
			listen = ":" + defaultServePort
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
	fmt.Fprintln(log, "kpipe cache serve: "+exposure(l.Addr(), cfg.dir, tlsConf != nil, o)+" (store: "+srv.Store()+")")
	ctx, stop := signal.NotifyContext(ctx, stopSignals()...)
	defer stop()
	if err := srv.Serve(ctx, l, tlsConf); err != nil {
		return err
	}
	fmt.Fprintln(log, "kpipe cache serve: stopped; the store is closed")
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
