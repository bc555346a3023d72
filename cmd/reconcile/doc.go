// Command reconcile is the binary: the scheduled service (serve), the
// on-demand CLI (run, import, findings, jobs, alerts) and the callback
// receiver. This package owns main, the commands with their flags and
// help, exit codes, and the wiring: it loads and checks the configuration
// before every command (package config), then resolves what the command
// needs once, after its flags are checked (resolve.go: the books, the
// providers, the alerts, the queue, the findings service), and passes it
// in. It holds no HTTP handler, view, business rule or configuration
// schema: those live in the packages that own them (api, console, alerts,
// findings, config). Only this package sees cobra; only it and config see
// viper.
package main
