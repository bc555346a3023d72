package report

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// Progress shows how far a long run has read, on one line of a terminal. It
// draws nothing when its output is not a terminal, nor before the run has
// lasted After, so short runs and pipes stay clean. Its Update method fits
// reconciler.Params.Progress.
type Progress struct {
	// After is how long a run must last before anything is drawn; default 2s.
	After time.Duration
	// Every is the least time between two redraws; default 200ms.
	Every time.Duration

	mu      sync.Mutex
	w       io.Writer
	tty     bool
	clock   func() time.Time
	start   time.Time
	last    time.Time
	lastLen int
}

// NewProgress returns a Progress that draws on f when f is a terminal.
func NewProgress(f *os.File, clock func() time.Time) *Progress {
	return newProgress(f, term.IsTerminal(int(f.Fd())), clock)
}

func newProgress(w io.Writer, tty bool, clock func() time.Time) *Progress {
	if clock == nil {
		clock = time.Now
	}
	return &Progress{After: 2 * time.Second, Every: 200 * time.Millisecond, w: w, tty: tty, clock: clock, start: clock()}
}

// Update reports that stage has read rows so far.
func (p *Progress) Update(stage string, rows int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	el, ok := p.due()
	if !ok {
		return
	}
	line := fmt.Sprintf("reconcile %c %-12s %s rows  %s%s", p.spin(el), stage, count(rows), el.Truncate(100*time.Millisecond),
		rate(rows, "rows", el))
	p.draw(line)
}

// due reports whether a line is to be drawn now (a terminal, a run that has
// lasted After, Every since the last line), and how long the run has
// lasted. The caller holds mu.
func (p *Progress) due() (time.Duration, bool) {
	now := p.clock()
	el := now.Sub(p.start)
	if !p.tty || el < p.After || now.Sub(p.last) < p.Every {
		return el, false
	}
	p.last = now
	return el, true
}

// spin is the spinner's position after el.
func (p *Progress) spin(el time.Duration) rune { return spinner[int(el/p.Every)%len(spinner)] }

// rate is "  N what/s" for n done in el, or "" before any time has passed.
func rate(n int, what string, el time.Duration) string {
	if s := el.Seconds(); s > 0 {
		return fmt.Sprintf("  %s %s/s", count(int(float64(n)/s)), what)
	}
	return ""
}

// draw replaces the progress line with line. The caller holds mu.
func (p *Progress) draw(line string) {
	pad := max(p.lastLen-len(line), 0)
	fmt.Fprintf(p.w, "\r%s%*s", line, pad, "")
	p.lastLen = len(line)
}

var spinner = []rune{'|', '/', '-', '\\'}

// Done clears the progress line, if one was drawn.
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lastLen > 0 {
		fmt.Fprintf(p.w, "\r%*s\r", p.lastLen, "")
		p.lastLen = 0
	}
}
