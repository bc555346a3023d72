package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestProgressFile(t *testing.T) {
	t.Parallel()
	now := time.Date(2024, 2, 6, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	var buf bytes.Buffer
	p := newProgress(&buf, false, clock)
	now = now.Add(time.Minute)
	p.UpdateFile("import", 100000, 5, 10)
	if buf.Len() != 0 {
		t.Fatalf("drew on a non-terminal: %q", buf.String())
	}
	now = time.Date(2024, 2, 6, 0, 0, 0, 0, time.UTC)
	p = newProgress(&buf, true, clock)
	now = now.Add(4 * time.Second)
	p.UpdateFile("import", 400000, 250, 1000)
	if got := buf.String(); got != "\rreconcile | import       400,000 lines   25%  4s  100,000 lines/s" {
		t.Fatalf("progress line %q", got)
	}
	p.Done()
	if !strings.HasSuffix(buf.String(), "\r") {
		t.Fatalf("line not cleared: %q", buf.String())
	}
}
