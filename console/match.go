package console

import (
	"strings"
)

// refusal is the reason of a conflict, without the operation's prefix.
func refusal(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, "conflict: "); i >= 0 {
		return s[i+len("conflict: "):]
	}
	return s
}
