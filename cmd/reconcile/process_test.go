package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// proc is a `reconcile` process started from the test binary.
type proc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  strings.Builder
	addr chan string
	// admin receives the admin listener's address (metrics, health).
	admin chan string
	done  chan struct{}
}

var (
	servingAddr = regexp.MustCompile(`"msg":"serving","addr":"([^"]+)"`)
	adminAddr   = regexp.MustCompile(`"msg":"admin serving","addr":"([^"]+)"`)
)

// startProc runs `reconcile args...` with env added, capturing its log.
func startProc(t *testing.T, name string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, addr: make(chan string, 1), admin: make(chan string, 1), done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], args...)
	p.cmd.Env = append(append(os.Environ(), mainEnv+"=1", "RECONCILE_LOG_FORMAT=json", "RECONCILE_HTTP_ADMIN_LISTEN=127.0.0.1:0"), env...)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout = io.Discard
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			if m := servingAddr.FindStringSubmatch(line); m != nil {
				select {
				case p.addr <- m[1]:
				default:
				}
			}
			if m := adminAddr.FindStringSubmatch(line); m != nil {
				select {
				case p.admin <- m[1]:
				default:
				}
			}
		}
		_ = p.cmd.Wait()
	}()
	t.Cleanup(func() { p.kill() })
	return p
}

// url waits for the process to serve HTTP and returns its base URL.
func (p *proc) url() string {
	p.t.Helper()
	return p.wait(p.addr)
}

// adminURL waits for the admin listener (metrics, health) and returns its
// base URL.
func (p *proc) adminURL() string {
	p.t.Helper()
	return p.wait(p.admin)
}

func (p *proc) wait(addr chan string) string {
	p.t.Helper()
	select {
	case a := <-addr:
		return "http://" + a
	case <-p.done:
		p.t.Fatalf("%s exited before serving:\n%s", p.name, p.output())
	case <-time.After(60 * time.Second):
		p.t.Fatalf("%s did not start serving:\n%s", p.name, p.output())
	}
	return ""
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

func (p *proc) kill() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-p.done
}

// term sends SIGTERM and waits for a clean exit.
func (p *proc) term() {
	p.t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		p.t.Fatalf("%s did not stop on SIGTERM:\n%s", p.name, p.output())
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		p.t.Fatalf("%s exited %d after SIGTERM:\n%s", p.name, code, p.output())
	}
}

// metric reads one sample from a process's /metrics.
func metric(t *testing.T, base, name string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, name+" ") {
			return strings.TrimPrefix(line, name+" ")
		}
	}
	return ""
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
