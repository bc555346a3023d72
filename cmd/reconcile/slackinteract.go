package main

import (
	"fmt"

	"github.com/reconcilehq/reconcile/alerts"
)

// slackRoutes serves POST /slack/interactions when the buttons are on.
func (s *server) slackRoutes() error {
	if !s.a.cfg.Alerts.Interactions.Enabled {
		return nil
	}
	cfg, err := s.a.cfg.SlackInteractions(s.d.zones)
	if err != nil {
		return err
	}
	cfg.Store, cfg.Clock, cfg.Logger, cfg.Findings = s.store, s.a.clock, s.logger, s.findings
	h, err := alerts.NewInteractions(cfg)
	if err != nil {
		return fmt.Errorf("config %w", err)
	}
	s.mux.Handle("POST /slack/interactions", h)
	s.logger.Info("slack interactions served", "path", "/slack/interactions")
	return nil
}
