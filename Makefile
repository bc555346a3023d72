.PHONY: test golden build bench-claims lint generate

# Runs the whole suite against a throwaway PostgreSQL and SQLite.
test:
	./scripts/test.sh $(ARGS)

# Rewrites every golden file from the current output (-update, defined by
# internal/golden), in each package whose tests use it; review the diff.
golden:
	./scripts/test.sh $$(go list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... | awk '/\/internal\/golden( |$$)/ {print $$1}') -update

build:
	go build -o bin/reconcile ./cmd/reconcile

bench-claims:
	./bench/claims.sh

lint:
	gofmt -l . && go vet ./...

# Rewrites config.example.yaml and docs/configuration.md from the configuration's
# defaults and descriptions (package config); a test fails when they are stale.
generate:
	go generate ./...
