package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The documentation's examples are tests. In README.md and docs/*.md:
//
//   - A fenced block marked console is a session: each line starting with
//     "$ reconcile " is a command (a line ending in "\" continues on the
//     next), and the lines after it, up to the next "$ " line or the end of
//     the block, are what it prints on standard output (on standard error
//     when it fails). A line "..." stands for any number of lines. With no
//     lines shown, the output is not checked. A command ending in
//     "# exit N" must exit N; every other command must succeed.
//   - The sessions of one document run in order, in one fresh SQLite
//     database, at a fixed time (docsNow), with paths under examples/ taken
//     from the repository: the quickstart runs end to end.
//   - A fenced block marked sh is an illustration: each line starting with
//     "reconcile " must name a command and flags that exist.
//
// So a documented command that breaks, or whose output changes, fails here.

// docsNow is when the documented sessions run: two days after the example
// data, so every settlement grace has passed.
var docsNow = time.Date(2026, 3, 16, 6, 0, 0, 0, time.UTC)

type docCommand struct {
	file     string
	line     int
	args     []string
	exit     int
	expected []string
}

type docBlock struct {
	lang  string
	line  int
	lines []string
}

func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"../../README.md"}
	more, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append(files, more...)
}

func readBlocks(t *testing.T, file string) []docBlock {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var (
		blocks []docBlock
		cur    *docBlock
	)
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		fence := strings.HasPrefix(strings.TrimSpace(l), "```")
		switch {
		case cur == nil && fence:
			cur = &docBlock{lang: strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "```")), line: n}
		case cur != nil && fence:
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, l)
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: unterminated code block", file, cur.line)
	}
	return blocks
}

// sessionCommands reads the commands of a console block.
func sessionCommands(t *testing.T, file string, b docBlock) []docCommand {
	t.Helper()
	var cmds []docCommand
	for i := 0; i < len(b.lines); i++ {
		l := b.lines[i]
		if !strings.HasPrefix(l, "$ ") {
			if len(cmds) == 0 {
				t.Fatalf("%s:%d: console block output before any command", file, b.line+1+i)
			}
			c := &cmds[len(cmds)-1]
			c.expected = append(c.expected, strings.TrimRight(l, " \t"))
			continue
		}
		line := b.line + 1 + i
		text := strings.TrimPrefix(l, "$ ")
		for strings.HasSuffix(text, "\\") && i+1 < len(b.lines) {
			i++
			text = strings.TrimSuffix(text, "\\") + " " + strings.TrimSpace(b.lines[i])
		}
		c := docCommand{file: file, line: line}
		if k := strings.Index(text, "# exit "); k >= 0 {
			n, err := strconv.Atoi(strings.TrimSpace(text[k+len("# exit "):]))
			if err != nil {
				t.Fatalf("%s:%d: bad exit annotation", file, line)
			}
			c.exit, text = n, text[:k]
		}
		words, err := splitWords(text)
		if err != nil {
			t.Fatalf("%s:%d: %v", file, line, err)
		}
		if len(words) == 0 || words[0] != "reconcile" {
			t.Fatalf("%s:%d: a console block runs only reconcile commands (use an sh block for others): %s", file, line, text)
		}
		c.args = words[1:]
		cmds = append(cmds, c)
	}
	for i := range cmds {
		for len(cmds[i].expected) > 0 && cmds[i].expected[len(cmds[i].expected)-1] == "" {
			cmds[i].expected = cmds[i].expected[:len(cmds[i].expected)-1]
		}
	}
	return cmds
}

// splitWords splits a command line as a shell would, for the quoting the
// docs use: single and double quotes, no variables.
func splitWords(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		quote rune
		in    bool
	)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// matchLines compares output with the documented lines, "..." matching any
// number of lines.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for k := 0; k <= len(got); k++ {
			if matchLines(want[1:], got[k:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && want[0] == got[0] && matchLines(want[1:], got[1:])
}

func outputLines(s string) []string {
	var out []string
	for l := range strings.SplitSeq(strings.TrimRight(s, "\n"), "\n") {
		out = append(out, strings.TrimRight(l, " \t"))
	}
	if len(out) == 1 && out[0] == "" {
		return nil
	}
	return out
}

// TestDocumentedCommands runs every console session of the docs.
func TestDocumentedCommands(t *testing.T) {
	t.Parallel()
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, file := range docFiles(t) {
		var cmds []docCommand
		for _, b := range readBlocks(t, file) {
			if b.lang == "console" {
				cmds = append(cmds, sessionCommands(t, file, b)...)
			}
		}
		if len(cmds) == 0 {
			continue
		}
		total += len(cmds)
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			db := "sqlite:" + filepath.Join(t.TempDir(), "reconcile.db")
			for _, c := range cmds {
				args := make([]string, 0, len(c.args)+2)
				hasDB := false
				for _, a := range c.args {
					if rest, ok := strings.CutPrefix(a, "examples/"); ok {
						a = filepath.Join(examples, rest)
					}
					hasDB = hasDB || a == "--database-url" || strings.HasPrefix(a, "--database-url=")
					args = append(args, a)
				}
				if !hasDB {
					args = append(args, "--database-url", db)
				}
				var out, errOut bytes.Buffer
				code := runAt(context.Background(), args, strings.NewReader(""), &out, &errOut, func() time.Time { return docsNow })
				where := fmt.Sprintf("%s:%d: reconcile %s", c.file, c.line, strings.Join(c.args, " "))
				if code != c.exit {
					t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", where, code, c.exit, out.String(), errOut.String())
				}
				shown := out.String()
				if code != 0 {
					shown = errOut.String()
				}
				shown = strings.ReplaceAll(shown, examples+string(filepath.Separator), "examples/")
				shown = strings.ReplaceAll(shown, db, "sqlite:reconcile.db")
				if len(c.expected) > 0 && !matchLines(c.expected, outputLines(shown)) {
					t.Errorf("%s: output differs from the documentation\ndocumented:\n%s\ngot:\n%s", where,
						strings.Join(c.expected, "\n"), shown)
				}
			}
		})
	}
	if total == 0 {
		t.Fatal("no documented commands found")
	}
}

// TestIllustratedCommandsExist checks that every reconcile command line in
// an sh block names a command and flags that exist.
func TestIllustratedCommandsExist(t *testing.T) {
	t.Parallel()
	for _, file := range docFiles(t) {
		for _, b := range readBlocks(t, file) {
			if b.lang != "sh" {
				continue
			}
			for i, l := range b.lines {
				text := strings.TrimSpace(l)
				if !strings.HasPrefix(text, "reconcile ") {
					continue
				}
				if k := strings.Index(text, " #"); k >= 0 {
					text = text[:k]
				}
				words, err := splitWords(strings.TrimSuffix(text, "\\"))
				if err != nil {
					t.Errorf("%s:%d: %v", file, b.line+1+i, err)
					continue
				}
				root := newRootCmd(&app{})
				cmd, rest, err := root.Find(words[1:])
				if err == nil && cmd.HasSubCommands() {
					err = fmt.Errorf("%s needs a subcommand", cmd.CommandPath())
				}
				if err == nil {
					err = cmd.ParseFlags(rest)
				}
				if err != nil {
					t.Errorf("%s:%d: %s: %v", file, b.line+1+i, text, err)
				}
			}
		}
	}
}
