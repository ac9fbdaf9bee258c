package safedial

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

func TestBlocked(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "::1": true, "10.1.2.3": true, "172.16.0.1": true, "192.168.1.1": true,
		"169.254.169.254": true, "fe80::1": true, "224.0.0.1": true, "ff02::1": true, "0.0.0.0": true, "::": true,
		"100.64.0.1": true, "fd00::1": true, "::ffff:127.0.0.1": true, "::ffff:169.254.169.254": true,
		"93.184.215.14": false, "2606:2800:21f:cb07:6820:80da:af6b:8b2c": false, "8.8.8.8": false,
	} {
		if got := Blocked(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Blocked(%s) = %v, want %v", addr, got, want)
		}
	}
}

func TestDialerRefusesUnlessAllowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	get := func(d *Dialer, host string) error {
		c := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 5 * time.Second}
		resp, err := c.Get("http://" + net.JoinHostPort(host, port) + "/")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}

	d := New(time.Second)
	// "localhost" is a name that resolves to loopback: blocked at connect time.
	err := get(d, "localhost")
	var be *BlockedError
	if !errors.As(err, &be) {
		t.Fatalf("GET via localhost: %v, want a BlockedError", err)
	}
	if err := get(d, "127.0.0.1"); !errors.As(err, &be) {
		t.Fatalf("GET 127.0.0.1: %v, want a BlockedError", err)
	}

	d.Allow("127.0.0.1:1") // another port of the same machine
	if err := get(d, "127.0.0.1"); !errors.As(err, &be) {
		t.Fatalf("allowing one port must not allow another: %v", err)
	}
	d.Allow("127.0.0.1:" + port) // a seed the user named
	if err := get(d, "127.0.0.1"); err != nil {
		t.Fatalf("GET an allowed seed host: %v", err)
	}
	if err := get(d, "localhost"); !errors.As(err, &be) {
		t.Fatalf("allowing 127.0.0.1 must not allow other names resolving to it: %v", err)
	}

	open := New(time.Second)
	open.AllowPrivate = true
	if err := get(open, "localhost"); err != nil {
		t.Fatalf("--allow-private: %v", err)
	}
}
