package faultproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Stats counts what a Proxy did.
type Stats struct {
	// Conns is how many client connections were accepted.
	Conns int
	// Cut is how many open connections were cut.
	Cut int
	// Refused is how many new connections were closed at once.
	Refused int
	// Bytes is how many bytes were forwarded, both ways (counted as each
	// chunk is handed on).
	Bytes int64
}

// Proxy forwards connections from its loopback address to a target.
type Proxy struct {
	network, target string
	ln              net.Listener

	mu      sync.Mutex
	conns   map[*link]struct{}
	latency time.Duration
	refuse  bool
	hole    chan struct{} // closed when no black hole is in place
	stats   Stats
	closed  bool
	wg      sync.WaitGroup
}

// link is one proxied connection: the client's and the target's ends.
type link struct {
	client, server net.Conn
	once           sync.Once
	done           chan struct{}
}

func (l *link) close() {
	l.once.Do(func() {
		close(l.done)
		_ = l.client.Close()
		_ = l.server.Close()
	})
}

// New starts a proxy on 127.0.0.1 that forwards to target on network ("tcp"
// or "unix").
func New(network, target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	open := make(chan struct{})
	close(open)
	p := &Proxy{network: network, target: target, ln: ln, conns: map[*link]struct{}{}, hole: open}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetLatency delays every chunk forwarded, either way, by d (0 for none).
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	p.latency = d
	p.mu.Unlock()
}

// SetRefuse makes new connections close as soon as they are accepted.
func (p *Proxy) SetRefuse(on bool) {
	p.mu.Lock()
	p.refuse = on
	p.mu.Unlock()
}

// SetBlackHole stops (on) or resumes (off) the flow of bytes on every
// connection, open or new; held bytes flow again when it is lifted.
func (p *Proxy) SetBlackHole(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.hole:
		if on {
			p.hole = make(chan struct{})
		}
	default:
		if !on {
			close(p.hole)
		}
	}
}

// CutAll closes every open connection at both ends and returns how many.
func (p *Proxy) CutAll() int {
	p.mu.Lock()
	links := make([]*link, 0, len(p.conns))
	for l := range p.conns {
		links = append(links, l)
	}
	p.stats.Cut += len(links)
	p.mu.Unlock()
	for _, l := range links {
		l.close()
	}
	return len(links)
}

// Stats returns the counts so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Close stops accepting, cuts every connection and waits for the proxy's
// goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.SetBlackHole(false)
	p.CutAll()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		p.mu.Lock()
		p.stats.Conns++
		refuse, closed := p.refuse, p.closed
		if refuse {
			p.stats.Refused++
		}
		p.mu.Unlock()
		if refuse || closed {
			_ = c.Close()
			continue
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	server, err := net.DialTimeout(p.network, p.target, 5*time.Second)
	if err != nil {
		_ = client.Close()
		return
	}
	l := &link{client: client, server: server, done: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.close()
		return
	}
	p.conns[l] = struct{}{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(l, server, client) }()
	go func() { defer wg.Done(); p.pipe(l, client, server) }()
	wg.Wait()
	l.close()
	p.mu.Lock()
	delete(p.conns, l)
	p.mu.Unlock()
}

// pipe copies src to dst chunk by chunk, honouring the latency and black
// hole in place when each chunk arrives. An error either way cuts the link;
// an end of stream is passed on as a half close.
func (p *Proxy) pipe(l *link, dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			latency, hole := p.latency, p.hole
			p.mu.Unlock()
			if latency > 0 {
				select {
				case <-time.After(latency):
				case <-l.done:
					return
				}
			}
			select {
			case <-hole:
			case <-l.done:
				return
			}
			// Counted before the write, so a peer that has read the bytes
			// also sees them in Stats.
			p.mu.Lock()
			p.stats.Bytes += int64(n)
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				l.close()
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				l.close()
				return
			}
			if cw, ok := dst.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
			}
			return
		}
	}
}
