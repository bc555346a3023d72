package findings

import (
	"context"
	"io"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/report"
)

// RunDetail is a run with the findings it saw last, as `runs show` prints
// it in JSON.
type RunDetail struct {
	Run      report.RunView `json:"run"`
	Findings []FindingView  `json:"findings"`
}

// WriteRun writes a run with the findings it was the last to see: its
// detail in text or JSON, or the findings in CSV, each finding's times in
// its provider's zone.
func WriteRun(w io.Writer, f report.Format, r ledger.Run, fs []ledger.Finding, zones map[string]*time.Location) error {
	d := RunDetail{Run: report.ViewRun(r), Findings: make([]FindingView, 0, len(fs))}
	for _, fd := range fs {
		d.Findings = append(d.Findings, ViewFinding(fd))
	}
	switch f {
	case report.JSON:
		return writeJSON(w, d)
	case report.CSV:
		return report.WriteFindingsIn(w, report.CSV, fs, zones)
	}
	return report.WriteRunText(w, d.Run, fs, zones)
}

// ShowRun reads the run id and the findings it was the last to see from r
// and writes them in format f (WriteRun). A run r does not hold is
// ledger.ErrNotFound.
func ShowRun(ctx context.Context, w io.Writer, f report.Format, r ledger.Reader, id int64, zones map[string]*time.Location) error {
	run, err := r.GetRun(ctx, id)
	if err != nil {
		return err
	}
	fs, err := r.ListFindings(ctx, ledger.FindingFilter{RunID: id, Limit: 10000})
	if err != nil {
		return err
	}
	return WriteRun(w, f, run, fs, zones)
}
