package config

//go:generate go run ../cmd/reconcile config example --output ../config.example.yaml
//go:generate go run ../cmd/reconcile config docs --output ../docs/configuration.md
