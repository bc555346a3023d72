// Command reconcile is the binary: the scheduled service (serve), the
// on-demand CLI (run, import, findings, jobs, alerts) and the callback
// receiver. This package owns main, the commands with their flags and
// help, and the mapping of errors to exit codes (main.go: a bad flag value
// another package reports as a schedule.FlagError is a usage error too).
// It loads and checks the configuration before every command (package
// config), then resolves the parts the command needs once, after its flags
// are checked (resolve.go: resolve, and with, which does a command's work
// with them; through package wiring: the books, the providers, the alerts,
// the queue, the charge and findings services), and passes them in. It
// holds no HTTP handler, view, business rule, configuration schema or
// construction of a part: those live in the packages that own them (api,
// console, alerts, findings, config, wiring). Only this package sees
// cobra; only it and config see viper.
package main
