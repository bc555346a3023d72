// Package mpesafake is a fake Safaricom Daraja API for tests and for
// `reconcile demo`: OAuth tokens, STK push and STK push query, the Pull
// Transactions API (registration, which it keeps for the test to read, and
// queries with paging, refused with 400.002.02 Invalid ShortCode until the
// short code is registered), and the Reversal and Transaction Status APIs
// with their result callbacks (success, failure, queue timeout, duplicate
// delivery or none at all), answering with the documented bodies and error
// codes. Pushes and reversals are settled by the test (Settle,
// SettleReversal) or after a delay (Config.AutoSettle), and their callbacks
// are delivered through a function the caller supplies or by HTTP POST. Faults (error answers, dropped
// connections, delays) are injected per path. Receipts and ids come from a
// seeded generator, so a run is repeatable.
//
// It is a fake of Safaricom, not a client: it must not import the mpesa
// package whose behaviour it is used to test.
package mpesafake
