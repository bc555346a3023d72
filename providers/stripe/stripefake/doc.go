// Package stripefake is a stateful stand-in for the parts of Stripe's API
// that reconcile uses, for tests and the demo: PaymentIntent create (with
// confirm), retrieve and search by metadata; charge, refund and balance
// transaction lists with created filters and cursor pagination (refunds
// also by charge or PaymentIntent); refund create and retrieve. Unlike stripe-mock it keeps what it is sent: an idempotency key
// replays its first response and refuses different parameters, lists page
// with has_more and starting_after, and it can drop a connection after
// acting, to imitate a crash between Stripe charging and the caller hearing
// about it.
//
// It must not be used against real money or real keys: it accepts only
// sk_test_ and rk_test_ keys and never talks to Stripe. It is not a
// validator of request shapes; stripe-mock does that.
package stripefake
