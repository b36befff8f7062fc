package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"inferno/server"
)

// listenFlags are serve's flags for its socket and for who may call it.
type listenFlags struct {
	addr         string
	maxConns     int
	readTimeout  time.Duration
	allowedHosts []string
	corsOrigins  []string
	tlsCert      string
	tlsKey       string
	noWebUI      bool
}

func (f *listenFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8080", "address to listen on, HOST:PORT (0.0.0.0:8080: every interface)")
	fl.IntVar(&f.maxConns, "max-conns", server.DefaultMaxConns, "most connections open at once; further clients wait to be accepted (an idle connection, kept alive or silent a second since it opened, is closed to make room)")
	fl.DurationVar(&f.readTimeout, "read-timeout", server.DefaultReadTimeout, "time a client has to send a request, header and body (the header at most 10s); later: 408 and the connection closed")
	fl.StringSliceVar(&f.allowedHosts, "allowed-hosts", nil, "on a loopback address without --api-key, Host names accepted besides localhost and loopback addresses (comma-separated; * for any)")
	fl.StringSliceVar(&f.corsOrigins, "cors-origin", nil, "web origins whose pages may call the server, e.g. https://app.example.com (comma-separated; * for any); requests from other origins get 403")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain) file; needs --tls-key")
	fl.StringVar(&f.tlsKey, "tls-key", "", "the PEM private key of --tls-cert")
	fl.BoolVar(&f.noWebUI, "no-webui", false, "serve no chat page at / (the API only)")
}

// check validates the flags.
func (f *listenFlags) check() error {
	if f.maxConns < 1 {
		return fmt.Errorf("--max-conns %d: want at least 1", f.maxConns)
	}
	if f.readTimeout <= 0 {
		return fmt.Errorf("--read-timeout %v: want a positive duration, e.g. 60s", f.readTimeout)
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	for _, o := range f.corsOrigins {
		if o != "*" && !strings.Contains(o, "://") {
			return fmt.Errorf("--cors-origin %q: want an origin such as https://app.example.com, or *", o)
		}
	}
	return nil
}

// listener is serve's socket, ready for http.Server.Serve.
type listener struct {
	*server.Limited             // at most --max-conns connections
	tls             *tls.Config // nil: plain HTTP
	loopback        bool        // bound to a loopback address only
}

// listen opens the socket: at most --max-conns connections at once, TLS
// with --tls-cert. The certificate is loaded first, so that a bad one
// fails before anything listens.
func (f *listenFlags) listen() (*listener, error) {
	var cfg *tls.Config
	if f.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert %s, --tls-key %s: %w", f.tlsCert, f.tlsKey, err)
		}
		cfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return nil, err
	}
	l := &listener{Limited: server.LimitListener(ln, f.maxConns), tls: cfg}
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		l.loopback = a.IP.IsLoopback()
	}
	return l, nil
}

// URL is the listener's base URL, for the log.
func (l *listener) URL() string {
	if l.tls != nil {
		return "https://" + l.Addr().String()
	}
	return "http://" + l.Addr().String()
}

// configure sets the server configuration's read timeout, its checks of
// where requests come from and whether it serves the chat page. A server
// on a loopback address with no API key checks the Host header (DNS
// rebinding would otherwise let a web page reach it); on another address,
// or with a key, it is reachable under any name anyway.
func (f *listenFlags) configure(cfg *server.Config, l *listener) {
	cfg.ReadTimeout = f.readTimeout
	cfg.CheckHost = l.loopback && cfg.APIKey == ""
	cfg.AllowedHosts = f.allowedHosts
	cfg.CORSOrigins = f.corsOrigins
	cfg.NoWebUI = f.noWebUI
}

// serve runs hs on l until it is shut down.
func (l *listener) serve(hs *http.Server) error {
	hs.ConnState = l.ConnState
	if l.tls == nil {
		return hs.Serve(l)
	}
	hs.TLSConfig = l.tls
	return hs.ServeTLS(l, "", "")
}
