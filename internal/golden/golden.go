package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from the output (make golden)")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Assert compares got with the file at path (relative to the package under
// test, testdata/...): a missing file fails the test, a different one fails
// it with a line diff. Under -update it writes got to path instead,
// creating its directory.
func Assert[T ~string | ~[]byte](tb testing.TB, path string, got T) {
	tb.Helper()
	g := []byte(got)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, g, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(want, g) {
		tb.Errorf("%s differs from the output (-want +got; run with -update to accept after checking):\n%s", path, Diff(string(want), string(g)))
	}
}

// AssertJSON is Assert for a JSON document, indented two spaces and ended
// by a newline so that the golden file reads and diffs line by line. got
// that is not JSON fails the test.
func AssertJSON(tb testing.TB, path string, got []byte) {
	tb.Helper()
	Assert(tb, path, IndentJSON(tb, got))
}

// IndentJSON indents a JSON document the way AssertJSON stores it, for
// golden files that hold JSON among other text.
func IndentJSON(tb testing.TB, raw []byte) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		tb.Fatalf("not JSON: %v\n%s", err, raw)
	}
	b.WriteByte('\n')
	return b.Bytes()
}
