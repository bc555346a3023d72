package alerts

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/slack-go/slack"

	"github.com/reconcilehq/reconcile/ledger"
)

// PreviewStore is what a preview reads; a ledger.Store has it.
type PreviewStore interface {
	GetRun(ctx context.Context, id int64) (ledger.Run, error)
	GetFinding(ctx context.Context, id string) (ledger.Finding, error)
	FindingHistory(ctx context.Context, id string) ([]ledger.HistoryEvent, error)
	ListFindings(ctx context.Context, f ledger.FindingFilter) ([]ledger.Finding, error)
	ListAlerts(ctx context.Context, runID int64, limit int) ([]ledger.Alert, error)
}

// Preview writes the Slack messages of run runID without sending anything:
// for each alert recorded for the run, its text fallback and Block Kit JSON
// as they would be posted now. A run without alerts gets what its open
// findings would announce on a first run. Secrets are not needed.
func Preview(ctx context.Context, s PreviewStore, runID int64, cfg Config, w io.Writer) error {
	cfg = cfg.WithDefaults()
	run, err := s.GetRun(ctx, runID)
	if err != nil {
		return fmt.Errorf("alerts: preview run %d: %w", runID, err)
	}
	recorded, err := s.ListAlerts(ctx, runID, listAll)
	if err != nil {
		return fmt.Errorf("alerts: preview run %d: %w", runID, err)
	}
	if len(recorded) == 0 {
		open, err := openFindings(ctx, s, run)
		if err != nil {
			return fmt.Errorf("alerts: preview run %d: %w", runID, err)
		}
		fmt.Fprintf(w, "# run %d recorded no alerts; what its open findings would announce:\n\n", runID)
		return writeMessages(w, firstRunMessages(cfg, run, open), nil)
	}
	var (
		msgs  []message
		heads []string
	)
	for _, a := range recorded {
		r, err := parseReason(a.Reason)
		if err != nil {
			return fmt.Errorf("alerts: preview alert %d: %w", a.ID, err)
		}
		var m message
		if r.Kind == reasonSummary {
			open, err := openFindings(ctx, s, run)
			if err != nil {
				return fmt.Errorf("alerts: preview alert %d: %w", a.ID, err)
			}
			m = buildSummary(cfg, summaryInput{AlertID: a.ID, Run: run, Findings: open}, metadata(a, "run_key"))
			m.Channel = a.Channel
		} else {
			f, err := s.GetFinding(ctx, a.Subject)
			if err != nil {
				return fmt.Errorf("alerts: preview alert %d: %w", a.ID, err)
			}
			hist, err := resolutionHistory(ctx, s, f)
			if err != nil {
				return fmt.Errorf("alerts: preview alert %d: %w", a.ID, err)
			}
			if m, err = buildFindingMessage(cfg, a, f, hist); err != nil {
				return err
			}
		}
		msgs = append(msgs, m)
		state := string(a.State)
		if a.State == ledger.AlertDelivered && a.MessageTS != "" {
			state += " ts " + a.MessageTS
		}
		if a.Error != "" {
			state += " (" + a.Error + ")"
		}
		heads = append(heads, a.Reason+" · "+state)
	}
	return writeMessages(w, msgs, heads)
}

// PreviewFindings writes what a run of provider over run's window would
// announce for findings on its first run (each finding that qualifies for
// a message of its own, then the summary), for `reconcile run --dry-run`:
// nothing is read, recorded or sent. run needs Provider, From and To; its
// ID, State and Counts are shown when set.
func PreviewFindings(w io.Writer, cfg Config, run ledger.Run, findings []ledger.Finding) error {
	cfg = cfg.WithDefaults()
	var open []ledger.Finding
	for _, f := range findings {
		if f.Status != ledger.FindingResolved {
			open = append(open, f)
		}
	}
	return writeMessages(w, firstRunMessages(cfg, run, open), nil)
}

// firstRunMessages are the messages of a run that sees open for the first
// time, in delivery order.
func firstRunMessages(cfg Config, run ledger.Run, open []ledger.Finding) []message {
	open = slices.Clone(open)
	slices.SortFunc(open, compareFindings)
	var msgs []message
	for _, f := range open {
		if !cfg.immediate(f) {
			continue
		}
		a := ledger.Alert{Subject: f.ID, Reason: reason{Kind: reasonOpened}.String(), Provider: f.Provider,
			RunID: run.ID, Severity: f.Severity, Channel: cfg.channelFor(f.Severity)}
		if m, err := buildFindingMessage(cfg, a, f, nil); err == nil {
			msgs = append(msgs, m)
		}
	}
	if len(open) > 0 || cfg.SummaryWhenClean {
		a := ledger.Alert{Subject: run.Key, Reason: reason{Kind: reasonSummary, Fingerprint: fingerprint(open),
			Attempt: max(run.Attempt, 1)}.String(), Provider: run.Provider, RunID: run.ID, Channel: cfg.Channel}
		m := buildSummary(cfg, summaryInput{Run: run, Findings: open}, metadata(a, "run_key"))
		m.Channel = cfg.Channel
		msgs = append(msgs, m)
	}
	return msgs
}

// writeMessages prints each message: a heading, the text fallback, and
// the Block Kit JSON ({"blocks": [...]}, as Block Kit Builder takes it).
func writeMessages(w io.Writer, msgs []message, heads []string) error {
	if len(msgs) == 0 {
		_, err := fmt.Fprintln(w, "# no messages")
		return err
	}
	for i, m := range msgs {
		id := "preview"
		if m.AlertID != 0 {
			id = "alert " + strconv.FormatInt(m.AlertID, 10)
		}
		head := string(m.Kind)
		if heads != nil {
			head = heads[i]
		}
		fmt.Fprintf(w, "=== %s · %s · channel %s", id, head, m.Channel)
		if m.ThreadTS != "" {
			fmt.Fprintf(w, " · thread %s", m.ThreadTS)
		}
		fmt.Fprintf(w, "\n--- text\n%s\n--- blocks\n", m.Text)
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Blocks []slack.Block `json:"blocks"`
		}{m.Blocks}); err != nil {
			return err
		}
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
	}
	return nil
}

// PreviewText writes only the notification text of each message
// PreviewFindings would show: what a phone's lock screen says.
func PreviewText(w io.Writer, cfg Config, run ledger.Run, findings []ledger.Finding) error {
	cfg = cfg.WithDefaults()
	var open []ledger.Finding
	for _, f := range findings {
		if f.Status != ledger.FindingResolved {
			open = append(open, f)
		}
	}
	msgs := firstRunMessages(cfg, run, open)
	if len(msgs) == 0 {
		_, err := fmt.Fprintln(w, "  (nothing to announce)")
		return err
	}
	for _, m := range msgs {
		if _, err := fmt.Fprintf(w, "  [%s] %s\n", m.Channel, m.Text); err != nil {
			return err
		}
	}
	return nil
}
