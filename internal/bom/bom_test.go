package bom_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf16"

	"github.com/reconcilehq/reconcile/internal/bom"
)

func utf16LE(s string) string {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return string(b)
}

func utf16BE(s string) string {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u>>8), byte(u))
	}
	return string(b)
}

func TestStrip(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                         "",
		"a":                        "a",
		"\xef\xbb":                 "\xef\xbb",
		"\xef\xbb\xbf":             "",
		"\xef\xbb\xbfid,x\n":       "id,x\n",
		"id,\xef\xbb\xbf\n":        "id,\xef\xbb\xbf\n",
		"\xef\xbb\xbf\xef\xbb\xbf": "\xef\xbb\xbf", // only the first mark is one
		"key,amount\n":             "key,amount\n",
		"{\"a\":1}\n":              "{\"a\":1}\n",
		"a\x00":                    "a\x00", // too short to tell
	} {
		r, err := bom.Strip(iotest.OneByteReader(strings.NewReader(in)))
		if err != nil {
			t.Errorf("Strip(%q): %v", in, err)
			continue
		}
		got, err := io.ReadAll(r)
		if err != nil || string(got) != want {
			t.Errorf("Strip(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	boom := errors.New("disk gone")
	r, err := bom.Strip(iotest.ErrReader(boom))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(r); !errors.Is(err, boom) {
		t.Errorf("a failing input reads as %v, want %v", err, boom)
	}
}

func TestRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, enc, order string }{
		{"UTF-16LE with its mark", "\xff\xfe" + utf16LE("key,amount\n"), "UTF-16", "little-endian"},
		{"UTF-16BE with its mark", "\xfe\xff" + utf16BE("key,amount\n"), "UTF-16", "big-endian"},
		{"UTF-16LE without a mark", utf16LE("key,amount\n"), "UTF-16", "little-endian"},
		{"UTF-16BE without a mark", utf16BE("{\"a\":1}"), "UTF-16", "big-endian"},
		{"just the UTF-16LE mark", "\xff\xfe", "UTF-16", "little-endian"},
		{"UTF-32LE", "\xff\xfe\x00\x00k\x00\x00\x00", "UTF-32", "little-endian"},
		{"UTF-32BE", "\x00\x00\xfe\xff\x00\x00\x00k", "UTF-32", "big-endian"},
	} {
		_, err := bom.Strip(strings.NewReader(tc.in))
		var ee *bom.EncodingError
		if !errors.As(err, &ee) || ee.Encoding != tc.enc || ee.ByteOrder != tc.order || !errors.Is(err, bom.ErrUnsupported) {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if want := tc.enc + " is not supported: save the file as UTF-8"; err.Error() != want {
			t.Errorf("%s: %q, want %q", tc.name, err, want)
		}
	}
}

// FuzzStrip: no input panics; what Strip passes on is the input, less a
// UTF-8 mark at most, and what it refuses starts like UTF-16 or UTF-32.
func FuzzStrip(f *testing.F) {
	for _, s := range []string{"", "a", "\xef\xbb\xbfid,x\n", "\xff\xfek\x00", "\xfe\xff\x00k", "k\x00e\x00", "\x00k\x00e", "\xff\xfe\x00\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := bom.Strip(strings.NewReader(string(data)))
		if err != nil {
			if len(data) < 2 || !errors.Is(err, bom.ErrUnsupported) {
				t.Fatalf("%q refused: %v", data, err)
			}
			return
		}
		got, _ := io.ReadAll(r)
		if want := strings.TrimPrefix(string(data), "\xef\xbb\xbf"); string(got) != want {
			t.Fatalf("Strip(%q) = %q", data, got)
		}
	})
}
