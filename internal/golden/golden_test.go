package golden_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/golden"
)

func TestDiff(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, want, got, diff string }{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"changed line", "a\nb\nc\n", "a\nB\nc\n", "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"added at end", "a\n", "a\nb\n", "@@ -1,1 +1,2 @@\n a\n+b\n"},
		{"removed at start", "a\nb\n", "b\n", "@@ -1,2 +1,1 @@\n-a\n b\n"},
		{"missing newline", "a\n", "a", "@@ -1,1 +1,1 @@\n-a\n+a\n\\ no newline at end\n"},
		{"from empty", "", "x\n", "@@ -1,0 +1,1 @@\n+x\n"},
		{
			"two hunks",
			"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
			"0\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12x\n",
			"@@ -1,4 +1,4 @@\n-1\n+0\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+12x\n",
		},
		{
			"close changes share a hunk",
			"1\n2\n3\n4\n5\n6\n",
			"1x\n2\n3\n4\n5\n6x\n",
			"@@ -1,6 +1,6 @@\n-1\n+1x\n 2\n 3\n 4\n 5\n-6\n+6x\n",
		},
	} {
		if got := golden.Diff(c.want, c.got); got != c.diff {
			t.Errorf("%s: Diff =\n%s\nwant\n%s", c.name, got, c.diff)
		}
	}
}

// TestDiffLarge keeps a diff of long texts cheap and still shows the change.
func TestDiffLarge(t *testing.T) {
	t.Parallel()
	var a, b strings.Builder
	for i := range 20000 {
		a.WriteString(strings.Repeat("x", i%7) + "\n")
		if i%1000 == 0 {
			b.WriteString("changed\n")
		} else {
			b.WriteString(strings.Repeat("x", i%7) + "\n")
		}
	}
	d := golden.Diff(a.String(), b.String())
	if !strings.Contains(d, "+changed\n") || !strings.Contains(d, "-\n") {
		t.Fatalf("diff does not show the change:\n%.500s", d)
	}
}

// recorder keeps what a failing Assert reports instead of failing the test.
type recorder struct {
	testing.TB
	failed, fatal bool
	msg           string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.msg = format
	if len(args) > 0 {
		r.msg = args[len(args)-1].(string)
	}
}
func (r *recorder) Fatalf(string, ...any) { r.failed, r.fatal = true, true }

func TestAssert(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "out.golden")
	if err := os.WriteFile(path, []byte("line 1\nline 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	if golden.Updating() {
		// Under -update, Assert writes what it is given.
		golden.Assert(r, filepath.Join(dir, "new", "out.golden"), "new\n")
		if b, err := os.ReadFile(filepath.Join(dir, "new", "out.golden")); r.failed || err != nil || string(b) != "new\n" {
			t.Fatalf("-update wrote %q (%v), failed %v", b, err, r.failed)
		}
		return
	}
	golden.Assert(r, path, "line 1\nline 2\n")
	if r.failed {
		t.Fatalf("equal output failed")
	}
	golden.Assert(r, path, []byte("line 1\nline two\n"))
	if !r.failed || r.fatal || !strings.Contains(r.msg, "-line 2\n+line two\n") {
		t.Fatalf("different output: failed %v fatal %v, diff %q", r.failed, r.fatal, r.msg)
	}
	r = &recorder{TB: t}
	golden.Assert(r, filepath.Join(dir, "missing.golden"), "x")
	if !r.fatal {
		t.Fatalf("a missing golden file did not stop the test")
	}
}

func TestAssertJSON(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "doc.json")
	if err := os.WriteFile(path, []byte("{\n  \"a\": [\n    1,\n    2\n  ]\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	if golden.Updating() {
		return // TestAssert covers -update
	}
	golden.AssertJSON(r, path, []byte(`{"a":[1,2]}`))
	if r.failed {
		t.Fatalf("the same document, compact, failed")
	}
	golden.AssertJSON(r, path, []byte(`{"a":[1,3]}`))
	if !r.failed || !strings.Contains(r.msg, "-    2\n+    3\n") {
		t.Fatalf("a changed document: failed %v, diff %q", r.failed, r.msg)
	}
	r = &recorder{TB: t}
	golden.AssertJSON(r, path, []byte(`{"a":`))
	if !r.fatal {
		t.Fatalf("text that is not JSON did not stop the test")
	}
}
