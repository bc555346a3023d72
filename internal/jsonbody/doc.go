// Package jsonbody is the one rule every JSON body reconcile accepts is read
// under: API requests, Slack interaction payloads, M-Pesa callbacks, Stripe
// webhooks and pulled objects, and the lines of a callbacks file.
//
// A body must be valid UTF-8 (encoding/json would turn bad bytes into U+FFFD
// silently), hold exactly one JSON value (no trailing data), and name no key
// twice in one object, at any depth. Keys are compared the way encoding/json
// matches them to struct fields, ignoring case ("amount" and "Amount" are one
// key), because encoding/json would otherwise keep the last value without a
// word. The error of a repeated key names its path (data.object.amount).
// Everything else (unknown fields, numbers as json.Number) is the caller's
// choice, through Options.
//
// It reads bytes already in memory: how large a body may be, and what a
// refused body is answered or where it is kept, belongs to the callers.
package jsonbody
