// Package config is the configuration of the reconcile binary: the typed
// schema (Config and its sections, with every default in Default), loading
// it from a config file, RECONCILE_* environment variables and flags
// (Load, with a local viper), checking it (Validate names every key at
// fault), and turning each section into the plain values the library
// packages take (BuildProviders, AlertsConfig.Planning, ConsoleConfig.Console,
// ScheduleConfig.Spec, LimitsConfig.Amounts). It also writes the reference
// documents generated from the schema: config.example.yaml and
// docs/configuration.md (`go generate ./config`).
//
// Only the binary imports this package: library packages take plain structs
// and never see viper. Viper is used here rather than in cmd/reconcile
// because the schema's tags, the defaults registered with viper, the secret
// keys that may come only from the environment and the check of unknown
// keys are one thing and are tested together. It opens no database and
// talks to no network: building a provider makes its client, nothing more.
package config
