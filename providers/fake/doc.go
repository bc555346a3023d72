// Package fake is a payment provider for tests and the demo: an HTTP server
// that counts the charges and the refunds of those charges it made per key, honours idempotency keys or not (a
// switch), and injects latency, retryable and permanent errors, timeouts and
// ambiguous failures (charged, then the connection drops); plus a Charger
// client for it. It keeps its state in memory and never touches the network
// beyond loopback.
package fake
