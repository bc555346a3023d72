package logging

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestLogsMaskPhoneNumbers: whatever a call site logs (a CheckoutRequestID
// that ends in the payer's number, an error quoting a body), the binary's
// logger masks the number, in both formats.
func TestLogsMaskPhoneNumbers(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"json", "text"} {
		var buf bytes.Buffer
		log := New(&buf, slog.LevelDebug, format)
		log.Info("charge finished for 254712340845", "provider_ref", "ws_CO_26052024101530254712340845",
			"error", errors.New(`body {"PhoneNumber":254712340845}`))
		log.With("customer", "0712340845").Warn("again", "nested", struct{ S string }{"x"})
		out := buf.String()
		if strings.Contains(out, "12340845") || strings.Contains(out, "0712340845") || !strings.Contains(out, "2547****0845") {
			t.Errorf("%s: %s", format, out)
		}
	}
}
