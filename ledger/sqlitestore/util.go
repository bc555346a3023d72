package sqlitestore

import (
	"encoding/json"
	"strings"
)

// prefixed qualifies a comma-separated column list with a table alias.
func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = alias + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// jsonList encodes values as a JSON array for json_each.
func jsonList[T ~string](vals []T) string {
	b, _ := json.Marshal(vals) // a slice of strings always marshals
	return string(b)
}
