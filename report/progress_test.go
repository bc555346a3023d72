package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestProgress(t *testing.T) {
	t.Parallel()
	now := time.Date(2024, 2, 6, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }

	var buf bytes.Buffer
	p := newProgress(&buf, false, clock)
	now = now.Add(time.Minute)
	p.Update("intents", 100000)
	p.Done()
	if buf.Len() != 0 {
		t.Fatalf("drew on a non-terminal: %q", buf.String())
	}

	now = time.Date(2024, 2, 6, 0, 0, 0, 0, time.UTC)
	p = newProgress(&buf, true, clock)
	now = now.Add(time.Second)
	p.Update("intents", 10000)
	if buf.Len() != 0 {
		t.Fatalf("drew before After: %q", buf.String())
	}
	now = now.Add(2 * time.Second)
	p.Update("transactions", 1500000)
	if got := buf.String(); !strings.HasPrefix(got, "\r") || !strings.Contains(got, "transactions") || !strings.Contains(got, "1,500,000 rows") {
		t.Fatalf("progress line %q", got)
	}
	n := buf.Len()
	p.Update("transactions", 1600000) // too soon to redraw
	if buf.Len() != n {
		t.Fatal("redrew within Every")
	}
	p.Done()
	if !strings.HasSuffix(buf.String(), "\r") {
		t.Fatalf("line not cleared: %q", buf.String())
	}
}
