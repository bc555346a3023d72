// Command reconcile is the binary: the scheduled service (serve), the on-demand
// CLI (run, import, findings, jobs, alerts) and the callback receiver. This
// package owns the wiring: configuration (viper), the command line (cobra),
// logging, exit codes and the HTTP server. Library packages never see viper or
// cobra.
package main
