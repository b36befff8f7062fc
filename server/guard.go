package server

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// guard checks where a request comes from before anything else runs.
//
// The Host header (Config.CheckHost): a server on a loopback address is
// reachable from a web page through DNS rebinding, a name of the page's
// that resolves to 127.0.0.1 after the page has loaded, so only loopback
// names and addresses, and Config.AllowedHosts, are accepted.
//
// The Origin header, which browsers send on cross-origin requests (and on
// same-origin ones but GET and HEAD): an origin that is neither the
// server's own (sameOrigin: the chat page at "/") nor in
// Config.CORSOrigins gets 403, since a page could otherwise make a
// visitor's browser drive the server with "simple" requests that need no
// preflight (a POST with Content-Type text/plain carries a JSON body just
// as well). An allowed origin gets CORS headers, and its preflights
// (OPTIONS with Access-Control-Request-Method) an answer. Clients that are
// not browsers send no Origin and are unaffected.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.CheckHost && !s.hostAllowed(r.Host) {
			s.log.Warn("refused a request for a foreign host", "host", r.Host, "path", r.URL.Path)
			s.metrics.requests.WithLabelValues("refused", "403").Inc()
			writeError(w, &apiError{Status: http.StatusForbidden, Type: "invalid_request_error", Code: "host_not_allowed",
				Message: "this server does not answer for the host " + quote(r.Host) + "; list it with --allowed-hosts"})
			return
		}
		origin, hasOrigin := r.Header["Origin"]
		if !hasOrigin {
			next.ServeHTTP(w, r)
			return
		}
		o := ""
		if len(origin) > 0 {
			o = origin[0]
		}
		w.Header().Add("Vary", "Origin")
		if s.sameOrigin(r, o) {
			// The server's own page (browsers send Origin on its POSTs):
			// no CORS headers needed.
			next.ServeHTTP(w, r)
			return
		}
		if !s.originAllowed(o) {
			s.log.Warn("refused a request from a browser origin not allowed by --cors-origin", "origin", o, "path", r.URL.Path)
			s.metrics.requests.WithLabelValues("refused", "403").Inc()
			writeError(w, &apiError{Status: http.StatusForbidden, Type: "invalid_request_error", Code: "origin_not_allowed",
				Message: "requests from the web origin " + quote(o) + " are not allowed; list it with --cors-origin"})
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", o)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Add("Vary", "Access-Control-Request-Method")
			h.Add("Vary", "Access-Control-Request-Headers")
			h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			if hdrs := r.Header.Get("Access-Control-Request-Headers"); hdrs != "" {
				h.Set("Access-Control-Allow-Headers", hdrs)
			}
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", "Retry-After")
		next.ServeHTTP(w, r)
	})
}

// hostAllowed reports whether the Host header names this machine's
// loopback interface or one of Config.AllowedHosts.
func (s *Server) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true // RFC 6761: always the loopback interface
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.Unmap().IsLoopback() {
		return true
	}
	for _, a := range s.cfg.AllowedHosts {
		if a == "*" || strings.EqualFold(strings.TrimSuffix(a, "."), host) {
			return true
		}
	}
	return false
}

// sameOrigin reports whether the origin o is the request's own,
// scheme://Host (the scheme "https" when the connection is TLS or a proxy
// says so in X-Forwarded-Proto, which a browser cannot set on a request
// without a preflight): the server's own page at "/" calling the API.
//
// A page of a DNS-rebinding attacker shares its origin with the Host it
// makes the browser send, so the Host must be one a rebinding cannot
// forge: an IP address, a loopback name or one of Config.AllowedHosts
// (what Config.CheckHost accepts), unless the API key is required (a
// rebinding page has not got it).
func (s *Server) sameOrigin(r *http.Request, o string) bool {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(strings.TrimSpace(strings.Split(r.Header.Get("X-Forwarded-Proto"), ",")[0]), "https") {
		scheme = "https"
	}
	if r.Host == "" || !strings.EqualFold(o, scheme+"://"+r.Host) {
		return false
	}
	if s.cfg.APIKey != "" || s.hostAllowed(r.Host) {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	_, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil
}

// originAllowed reports whether Config.CORSOrigins allows the origin o
// ("scheme://host[:port]", compared without case; "null" only when listed).
func (s *Server) originAllowed(o string) bool {
	for _, a := range s.cfg.CORSOrigins {
		if a == "*" || strings.EqualFold(strings.TrimSuffix(a, "/"), o) {
			return true
		}
	}
	return false
}

// quote quotes an untrusted header value for a message, cut to a sane
// length.
func quote(v string) string {
	if len(v) > 100 {
		v = v[:100] + "..."
	}
	return `"` + strings.ToValidUTF8(strings.ReplaceAll(v, `"`, `'`), "?") + `"`
}
