// Package money owns amounts: a decimal value plus an ISO 4217 currency, kept at
// the currency's exponent. It parses amounts strictly (more decimals than the
// currency allows is an error, never rounded), converts to and from integer minor
// units at the edges, and renders. It must not use floating point, and it never
// sets the decimal package's globals.
package money
