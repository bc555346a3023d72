// Package poll waits for a condition to hold: one loop with a deadline and an
// interval, for tests that must wait on what a process does instead of
// sleeping a fixed time. It owns no state and never sleeps past its deadline.
package poll
