package faultproxy_test

import (
	"bufio"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/faultproxy"
	"github.com/reconcilehq/reconcile/internal/poll"
)

// echo serves lines back to their sender.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					if _, err := c.Write(append(sc.Bytes(), '\n')); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(c net.Conn, msg string, timeout time.Duration) (string, error) {
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte(msg + "\n")); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return line, err
}

func setup(t *testing.T) (*faultproxy.Proxy, net.Conn) {
	t.Helper()
	p, err := faultproxy.New("tcp", echo(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// The dial returns once the kernel has the connection; wait until the
	// proxy has accepted it too, so a fault set next applies to later
	// connections only.
	if err := poll.Until(t.Context(), 5*time.Second, time.Millisecond, func() (bool, error) { return p.Stats().Conns >= 1, nil }); err != nil {
		t.Fatalf("the proxy never accepted the first connection: %v", err)
	}
	return p, c
}

func TestForwards(t *testing.T) {
	t.Parallel()
	p, c := setup(t)
	if got, err := roundTrip(c, "hello", 5*time.Second); err != nil || got != "hello\n" {
		t.Fatalf("got %q, %v", got, err)
	}
	if s := p.Stats(); s.Conns != 1 || s.Bytes != 12 {
		t.Fatalf("stats %+v, want 1 connection and 12 bytes", s)
	}
}

func TestCutAll(t *testing.T) {
	t.Parallel()
	p, c := setup(t)
	if _, err := roundTrip(c, "one", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := p.CutAll(); n != 1 {
		t.Fatalf("cut %d connections, want 1", n)
	}
	if _, err := roundTrip(c, "two", 5*time.Second); err == nil {
		t.Fatal("a cut connection still answered")
	}
}

func TestBlackHoleTimesOutThenFlows(t *testing.T) {
	t.Parallel()
	p, c := setup(t)
	p.SetBlackHole(true)
	if _, err := roundTrip(c, "held", 200*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("err = %v through a black hole, want a timeout", err)
	}
	p.SetBlackHole(false)
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("after the black hole: %q, %v", line, err)
	}
}

func TestLatency(t *testing.T) {
	t.Parallel()
	p, c := setup(t)
	p.SetLatency(100 * time.Millisecond)
	start := time.Now()
	if _, err := roundTrip(c, "slow", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Fatalf("round trip took %s, want at least 200ms (100ms each way)", d)
	}
}

func TestRefuse(t *testing.T) {
	t.Parallel()
	p, _ := setup(t)
	p.SetRefuse(true)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := roundTrip(c, "no", 5*time.Second); err == nil {
		t.Fatal("a refused connection answered")
	}
	if s := p.Stats(); s.Refused != 1 {
		t.Fatalf("stats %+v, want 1 refused", s)
	}
}
