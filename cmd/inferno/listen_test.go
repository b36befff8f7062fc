package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// to dir and returns their paths and a pool that trusts it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "inferno test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

var listeningURL = regexp.MustCompile(`listening addr=(https?://[0-9.:]+)`)

// startServeWith runs "inferno serve" with args on a free loopback port
// and waits until /health answers 200 through client.
func startServeWith(t *testing.T, client *http.Client, args ...string) (url string, stderr *syncBuffer) {
	t.Helper()
	stderr = &syncBuffer{}
	cmd := exec.Command(inferno, append([]string{"serve", "--addr", "127.0.0.1:0", "--backend", testBackend()}, args...)...)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := listeningURL.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
			if resp, err := client.Get(url + "/health"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					return url, stderr
				}
			}
		}
		select {
		case err := <-done:
			t.Fatalf("serve exited: %v\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("serve not ready after 30 s:\n%s", stderr.String())
	return "", nil
}

// TestServeTLS serves HTTPS with a self-signed certificate and answers a
// chat completion through a client that trusts it.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	cert, key, pool := selfSigned(t, t.TempDir())
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	url, _ := startServeWith(t, client, goldenModel, "--tls-cert", cert, "--tls-key", key)
	if !strings.HasPrefix(url, "https://") {
		t.Fatalf("listening on %s", url)
	}
	resp, err := client.Post(url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"messages":[{"role":"user","content":"Hi"}],"max_tokens":4}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"chat.completion"`) || resp.ProtoMajor != 2 {
		t.Errorf("chat over TLS: %s %d %s", resp.Proto, resp.StatusCode, b)
	}
	// Plain HTTP to the TLS port gets no answer of the API.
	if resp, err := http.Get(strings.Replace(url, "https://", "http://", 1) + "/health"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP answered on the TLS port")
		}
	}
}

// TestServeHostCheck: on a loopback address without a key, serve refuses
// foreign Host headers (DNS rebinding) and browser origins not listed in
// --cors-origin but its own (the chat page's); with a key, Host is not
// checked. --no-webui leaves "/" without the page.
func TestServeHostCheck(t *testing.T) {
	t.Parallel()
	get := func(url, host, origin string) int {
		req, _ := http.NewRequest("POST", url+"/tokenize", strings.NewReader(`{"content":"Hi"}`))
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		req.Header.Set("Authorization", "Bearer k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	url, stderr := startServeWith(t, http.DefaultClient, goldenModel, "--allowed-hosts", "inferno.lan", "--cors-origin", "http://localhost:3000")
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{"", "", 200}, {"localhost:8080", "", 200}, {"inferno.lan", "", 200}, {"rebound.example", "", 403},
		{"", "http://localhost:3000", 200}, {"", "https://evil.example", 403},
		{"", url, 200}, {"inferno.lan", "http://inferno.lan", 200}, {"rebound.example", "http://rebound.example", 403},
	} {
		if got := get(url, tc.host, tc.origin); got != tc.want {
			t.Errorf("Host %q Origin %q: status %d, want %d", tc.host, tc.origin, got, tc.want)
		}
	}
	if !strings.Contains(stderr.String(), "host_check=true") {
		t.Errorf("the log does not say the Host is checked:\n%s", stderr.String())
	}
	page := func(url string) (int, string) {
		resp, err := http.Get(url + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Content-Type")
	}
	if status, ctype := page(url); status != 200 || ctype != "text/html; charset=utf-8" {
		t.Errorf("GET /: %d %s", status, ctype)
	}
	keyed, _ := startServeWith(t, http.DefaultClient, goldenModel, "--api-key", "k", "--no-webui")
	if got := get(keyed, "rebound.example", ""); got != 200 {
		t.Errorf("with --api-key, Host rebound.example: status %d, want 200", got)
	}
	if status, _ := page(keyed); status != 404 {
		t.Errorf("--no-webui: GET / %d, want 404", status)
	}
}

// TestServeListenFlags: bad socket flags fail before anything listens.
func TestServeListenFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, _, _ := selfSigned(t, dir)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--tls-cert", cert}, "go together"},
		{[]string{"--tls-cert", cert, "--tls-key", filepath.Join(dir, "missing.pem")}, "--tls-key"},
		{[]string{"--max-conns", "0"}, "--max-conns 0"},
		{[]string{"--read-timeout", "0s"}, "--read-timeout"},
		{[]string{"--cors-origin", "app.example"}, "want an origin"},
	} {
		_, errOut, code := run(t, "", append([]string{"serve", goldenModel, "--addr", "127.0.0.1:0"}, tc.args...)...)
		if code != 1 || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v: exit %d, %q, want 1 and %q", tc.args, code, errOut, tc.msg)
		}
	}
}

// TestGenerateContextFull: generate says why it stopped when the context
// is full, and says nothing when -n ends it.
func TestGenerateContextFull(t *testing.T) {
	t.Parallel()
	_, errOut, code := run(t, "", "generate", goldenModel, "Hello there", "--ctx", "8", "-n", "20", "--backend", "scalar", "--ignore-eos")
	if code != 0 || !strings.Contains(errOut, "the context of 8 tokens is full") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	_, errOut, code = run(t, "", "generate", goldenModel, "Hello there", "-n", "3", "--backend", "scalar", "--ignore-eos")
	if code != 0 || strings.Contains(errOut, "context") {
		t.Errorf("-n 3: exit %d: %s", code, errOut)
	}
}
