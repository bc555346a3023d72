package alerts

import (
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/reconcilehq/reconcile/ledger"
)

var scrubCases = []struct {
	in, want string
}{
	{"", ""},
	{"two charges for one intent", "two charges for one intent"},
	{"customer 254712340845 paid twice", "customer 2547****0845 paid twice"},
	{"customer +254712340845 paid", "customer 2547****0845 paid"},
	{"call 0712 340 845 or +254 712 340 845", "call 0712****0845 or 2547****0845"},
	{"dialled 0712-340-845.", "dialled 0712****0845."},
	{"ids txn_1234567890abc and SE41XYZ123 stay", "ids txn_1234567890abc and SE41XYZ123 stay"},
	{"amount 1500.00 on 2024-05-01 12:12:00", "amount 1500.00 on 2024-05-01 12:12:00"},
	{"short 12345678 stays", "short 12345678 stays"},
	{"see https://hooks.slack.com/services/T1/B2/abc now", "see [link removed] now"},
	{"see www.example.com/x?token=1", "see [link removed]"},
	{"token xoxb-1234-abcd leaked", "token [redacted] leaked"},
	{"key sk_live_51Habc and whsec_abc", "key [redacted] and [redacted]"},
	{"Authorization: Bearer abc.def", "Authorization: [redacted]"},
	{"mail jane.doe@example.com", "mail j***@example.com"},
	{"\xff\xfe bad utf8 254712340845", "\uFFFD bad utf8 2547****0845"},
}

func TestScrub(t *testing.T) {
	for _, c := range scrubCases {
		if got := scrub(c.in); got != c.want {
			t.Errorf("scrub(%q) = %q, want %q", c.in, got, c.want)
		}
		checkScrubbed(t, c.in, scrub(c.in))
	}
}

var (
	bareDigitRun = regexp.MustCompile(`\d{9,}`)
	secretLike   = regexp.MustCompile(`(?i)xox[a-z]-[a-z0-9]|xapp-[a-z0-9]|(?:sk|rk)_(?:live|test)_[a-z0-9]|whsec_[a-z0-9]`)
)

// checkScrubbed asserts scrub's promises: no URL scheme, no token, no
// standalone run of nine or more digits, valid UTF-8.
func checkScrubbed(t *testing.T, in, out string) {
	t.Helper()
	if strings.Contains(out, "://") {
		t.Errorf("scrub(%q) = %q keeps a URL", in, out)
	}
	if secretLike.MatchString(out) {
		t.Errorf("scrub(%q) = %q keeps a token", in, out)
	}
	for _, loc := range bareDigitRun.FindAllStringIndex(out, -1) {
		before := loc[0] == 0 || !isWordByte(out[loc[0]-1]) && out[loc[0]-1] != '+'
		after := loc[1] == len(out) || !isWordByte(out[loc[1]])
		if before && after {
			t.Errorf("scrub(%q) = %q keeps the number %q", in, out, out[loc[0]:loc[1]])
		}
	}
	if !utf8.ValidString(out) {
		t.Errorf("scrub(%q) = %q is not UTF-8", in, out)
	}
}

func FuzzScrub(f *testing.F) {
	for _, c := range scrubCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := scrub(s)
		checkScrubbed(t, s, out)
		if again := scrub(out); again != out {
			t.Errorf("scrub is not stable: %q -> %q -> %q", s, out, again)
		}
	})
}

var counterpartyCases = []struct {
	in, want string
}{
	{"", ""},
	{"2547****0845", "2547****0845"},
	{"254712340845 - JANE WANJIKU DOE", "2547****0845 JANE"},
	{"JANE WANJIKU DOE 254712340845", "JANE 2547****0845"},
	{"jane.doe@example.com", "j***@example.com"},
	{"Jane", "Jane"},
	{"O'Brien Mary-Anne", "O'Brien"},
	{"cus_NffrFeUfNV2Hib", "cu****"},
	{"0712 340 845", "0712****0845"},
	{"254712340845@12345678.com", "2***@****.com"},
	{"Émile Zola", "Émile"},
	{"éa@example.com", "é***@example.com"},
	{"3f9a0c1d2e4b5a69778899aabbccddeeff00112233445566778899aabbccddee", "sha256:3f9a0c1d…"},
}

func TestMaskCounterparty(t *testing.T) {
	for _, c := range counterpartyCases {
		if got := maskCounterparty(c.in); got != c.want {
			t.Errorf("maskCounterparty(%q) = %q, want %q", c.in, got, c.want)
		}
		checkMasked(t, c.in, maskCounterparty(c.in))
	}
}

var digitRun7 = regexp.MustCompile(`\d{7,}`)

// checkMasked asserts maskCounterparty's promises: no run of seven digits,
// at most one word that could be a name, no e-mail address with more than
// its first character, valid UTF-8.
func checkMasked(t *testing.T, in, out string) {
	t.Helper()
	if digitRun7.MatchString(out) {
		t.Errorf("maskCounterparty(%q) = %q keeps digits", in, out)
	}
	if !utf8.ValidString(out) {
		t.Errorf("maskCounterparty(%q) = %q is not UTF-8", in, out)
	}
	names := 0
	for _, w := range strings.Fields(out) {
		if isName(w) {
			names++
		}
	}
	if names > 1 {
		t.Errorf("maskCounterparty(%q) = %q keeps %d names", in, out, names)
	}
	for _, w := range strings.Fields(out) {
		if local, _, ok := strings.Cut(w, "@"); ok && utf8.RuneCountInString(strings.Trim(local, "*")) > 1 {
			t.Errorf("maskCounterparty(%q) = %q keeps an e-mail address", in, out)
		}
	}
}

func FuzzMaskCounterparty(f *testing.F) {
	for _, c := range counterpartyCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkMasked(t, s, maskCounterparty(s))
	})
}

func TestEscapeAndCode(t *testing.T) {
	if got := escape("<!channel> & <https://x|y>"); got != "&lt;!channel&gt; &amp; &lt;https://x|y&gt;" {
		t.Errorf("escape = %q", got)
	}
	if got := code("a`b<c>"); got != "`a'b&lt;c&gt;`" {
		t.Errorf("code = %q", got)
	}
	if got := code(""); got != "-" {
		t.Errorf("code of empty = %q", got)
	}
}

func TestTruncate(t *testing.T) {
	if got := truncate("héllo wörld", 5); got != "héll…" || utf8.RuneCountInString(got) != 5 {
		t.Errorf("truncate = %q", got)
	}
	if got := truncate("short", 10); got != "short" {
		t.Errorf("truncate = %q", got)
	}
}

func TestKindCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		kind string
		want string
	}{
		{1, "duplicate_charge", "1 duplicate charge"},
		{2, "duplicate_charge", "2 duplicate charges"},
		{3, "amount_mismatch", "3 amount mismatches"},
		{2, "stuck_intent", "2 stuck intents"},
		{2, "missing_at_provider", "2 missing at provider"},
	} {
		if got := kindCount(ledger.Kind(c.kind), c.n); got != c.want {
			t.Errorf("kindCount(%s, %d) = %q, want %q", c.kind, c.n, got, c.want)
		}
	}
}

func TestUpperFirst(t *testing.T) {
	for in, want := range map[string]string{"": "", "abc": "Abc", "éa": "Éa", "\xffa": "\xffa"} {
		if got := upperFirst(in); got != want {
			t.Errorf("upperFirst(%q) = %q", in, got)
		}
	}
	if !unicode.IsUpper([]rune(upperFirst("ünïcode"))[0]) {
		t.Error("upperFirst of a multi-byte letter")
	}
}
