package alerts

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
)

// TestPreview prints a stored run's messages (`reconcile alerts preview
// --run ID`), one delivered, without sending, and without secrets.
func TestPreview(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupDelivery(t, dbtest.SQLite(t), ModeBot, nil)
	dup, failed, unknown := fixtureFindings(t)
	alerts := b.rec.run(dup, failed, unknown)
	if err := b.d.Deliver(ctx, alerts[0].ID, 1); err != nil {
		t.Fatal(err)
	}
	sent := len(b.bot.Posts())

	cfg := b.cfg
	cfg.BotToken = "" // a preview needs no secret
	var out bytes.Buffer
	if err := Preview(ctx, b.store, alerts[0].RunID, cfg, &out); err != nil {
		t.Fatal(err)
	}
	got := bytes.ReplaceAll(out.Bytes(), []byte(b.bot.Posts()[0].TS), []byte("<ts>"))
	golden.Assert(t, "testdata/preview_run.txt", got)
	if len(b.bot.Posts()) != sent {
		t.Fatal("preview sent a message")
	}
	if strings.Contains(out.String(), "WANJIKU") || strings.Contains(out.String(), "254712340845") {
		t.Fatal("preview shows unmasked data")
	}

	// A run that recorded nothing shows what its findings would announce.
	run, err := b.store.ClaimRun(ctx, ledger.RunClaim{Provider: "mpesa", From: winTo, To: winTo.Add(24 * 3600e9),
		Owner: "test", Lease: 60e9, Now: b.clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Preview(ctx, b.store, run.ID, cfg, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "# run 2 recorded no alerts") || !strings.Contains(out.String(), "# no messages") {
		t.Fatalf("empty run preview:\n%s", out.String())
	}
	if err := Preview(ctx, b.store, 99, cfg, &out); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("preview of a missing run: %v", err)
	}
}

// TestPreviewFindings prints what a dry run would send.
func TestPreviewFindings(t *testing.T) {
	t.Parallel()
	dup, failed, unknown := fixtureFindings(t)
	resolved := unknown
	resolved.Status = ledger.FindingResolved
	run := ledger.Run{Provider: "mpesa", From: winFrom, To: winTo, Key: ledger.RunKey("mpesa", winFrom, winTo)}
	var out bytes.Buffer
	cfg := Config{Channel: "C0FINOPS", SeverityChannels: map[ledger.Severity]string{ledger.SeverityHigh: "C0URGENT"}, Location: eat}
	if err := PreviewFindings(&out, cfg, run, []ledger.Finding{unknown, dup, failed, resolved}); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "testdata/preview_dry_run.txt", out.Bytes())
}
