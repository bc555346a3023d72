package schedule

import (
	"errors"
	"testing"
	"time"
)

// TestRunWindow: a run's --to defaults to a day after --from in the zone;
// bad values are errors naming their flag.
func TestRunWindow(t *testing.T) {
	t.Parallel()
	start, end, err := RunWindow("2026-11-02", "", eat)
	if err != nil || !start.Equal(time.Date(2026, 11, 1, 21, 0, 0, 0, time.UTC)) || !end.Equal(start.Add(24*time.Hour)) {
		t.Fatalf("default window: %s..%s (%v)", start, end, err)
	}
	for _, c := range []struct{ from, to, flag, msg string }{
		{"yesterday", "", "from", "--from: "},
		{"2026-11-02", "later", "to", "--to: "},
		{"2026-11-02", "2026-11-01", "to", "--to (2026-10-31T21:00:00Z) must be after --from (2026-11-01T21:00:00Z)"},
	} {
		_, _, err := RunWindow(c.from, c.to, eat)
		var fe *FlagError
		if !errors.As(err, &fe) || fe.Flag != c.flag || len(err.Error()) < len(c.msg) || err.Error()[:len(c.msg)] != c.msg {
			t.Errorf("%s..%s: %v, want a --%s error starting %q", c.from, c.to, err, c.flag, c.msg)
		}
	}
}

// TestListWindow: a list's bounds are optional; given both, --to must be
// after --from.
func TestListWindow(t *testing.T) {
	t.Parallel()
	if start, end, err := ListWindow("", "", eat); err != nil || !start.IsZero() || !end.IsZero() {
		t.Fatalf("no bounds: %s..%s (%v)", start, end, err)
	}
	start, end, err := ListWindow("2026-11-02", "2026-11-03T00:00:00Z", eat)
	if err != nil || !start.Equal(time.Date(2026, 11, 1, 21, 0, 0, 0, time.UTC)) || !end.Equal(time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("bounds: %s..%s (%v)", start, end, err)
	}
	for _, c := range []struct{ from, to, flag, msg string }{
		{"soon", "", "from", `--from `},
		{"", "soon", "to", `--to `},
		{"2026-11-03", "2026-11-02", "to", "--to 2026-11-02 is not after --from 2026-11-03"},
	} {
		_, _, err := ListWindow(c.from, c.to, eat)
		var fe *FlagError
		if !errors.As(err, &fe) || fe.Flag != c.flag || len(err.Error()) < len(c.msg) || err.Error()[:len(c.msg)] != c.msg {
			t.Errorf("%q..%q: %v, want a --%s error starting %q", c.from, c.to, err, c.flag, c.msg)
		}
	}
}
