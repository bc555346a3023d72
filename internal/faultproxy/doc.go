// Package faultproxy is a TCP proxy for tests that puts network faults
// between a client and its server: connections cut, latency added to every
// chunk, black holes (bytes stop flowing, so the client's timeouts fire) and
// refused connections. It forwards to a TCP address or a unix socket (a
// PostgreSQL socket directory's .s.PGSQL.5432) and counts what it did. It
// listens on loopback only and is never part of the program.
package faultproxy
