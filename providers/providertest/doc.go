// Package providertest holds what the tests of every provider adapter
// check: CheckSighting asserts the properties each emitted sighting must
// have, whatever the provider. It is imported by tests only.
package providertest
