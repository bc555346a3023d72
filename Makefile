.PHONY: test build bench-claims lint

# Runs the whole suite against a throwaway PostgreSQL and SQLite.
test:
	./scripts/test.sh $(ARGS)

build:
	go build -o bin/reconcile ./cmd/reconcile

bench-claims:
	./bench/claims.sh

lint:
	gofmt -l . && go vet ./...
