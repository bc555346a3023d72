// Package bench holds the reconcile benchmarks: cmd/runbench builds a bulk
// day in PostgreSQL and times a reconcile run against hand-written SQL and
// a binary COPY of its inputs; cmd/matchrss measures the in-memory matcher's
// peak memory on tens of millions of rows. reconcile.sh runs them.
// cmd/importbench generates statement, report and intents files and times
// reconcile import of them against COPY and a plain SQLite insert, with
// peak RSS; import.sh runs it.
package bench
