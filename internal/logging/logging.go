package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"golang.org/x/term"

	"github.com/reconcilehq/reconcile/ledger"
)

// New is the binary's logger: records at level and above, to w, as text
// or JSON (format "text", "json", or "auto": text on a terminal, JSON
// otherwise), with phone numbers masked in every message and attribute.
func New(w io.Writer, level slog.Level, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: maskAttr}
	if format == "auto" || format == "" {
		format = "json"
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			format = "text"
		}
	}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// AtLeast is h dropping the records below level: River's per-second info
// lines are kept out of the service log this way.
func AtLeast(h slog.Handler, level slog.Level) slog.Handler { return minLevel{h, level} }

// minLevel drops records below a level.
type minLevel struct {
	slog.Handler
	level slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.level && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(attrs), h.level}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.level}
}

// maskAttr masks phone numbers in every message and attribute the binary
// logs (ledger.MaskMSISDNs): a CheckoutRequestID can end in the payer's
// number, and errors can quote a body that holds one.
func maskAttr(_ []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		if v := a.Value.String(); ledger.MaskMSISDNs(v) != v {
			a.Value = slog.StringValue(ledger.MaskMSISDNs(v))
		}
	case slog.KindAny:
		switch v := a.Value.Any().(type) {
		case error:
			a.Value = slog.StringValue(ledger.MaskMSISDNs(v.Error()))
		case fmt.Stringer:
			a.Value = slog.StringValue(ledger.MaskMSISDNs(v.String()))
		}
	}
	return a
}
