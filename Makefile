.PHONY: test build bench-claims lint generate

# Runs the whole suite against a throwaway PostgreSQL and SQLite.
test:
	./scripts/test.sh $(ARGS)

build:
	go build -o bin/reconcile ./cmd/reconcile

bench-claims:
	./bench/claims.sh

lint:
	gofmt -l . && go vet ./...

# Rewrites config.example.yaml and docs/configuration.md from the configuration's
# defaults and descriptions (cmd/reconcile); a test fails when they are stale.
generate:
	go generate ./...
