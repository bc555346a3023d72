// Package openapitest checks live HTTP exchanges against docs/openapi.yaml:
// each request and answer a test makes through a Checker is validated
// against the description, a route the description lacks fails the test,
// and Covered fails for every documented operation never called.
package openapitest
