package books_test

import (
	"fmt"

	"github.com/reconcilehq/reconcile/books"
)

// A phone number, however it is typed, is one person: one canonical form,
// one token under one key.
func ExampleParseSubject() {
	key := []byte("a secret of at least 16 bytes")
	for _, in := range []string{"0712 345 678", "+254712345678", "Bob@Example.com"} {
		s, err := books.ParseSubject(in)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(s.Kind, s.Canonical, s.Token(key))
	}
	_, err := books.ParseSubject("order 17")
	fmt.Println(err)
	// Output:
	// msisdn 254712345678 erased:bddbfdbd2f30560e
	// msisdn 254712345678 erased:bddbfdbd2f30560e
	// email bob@example.com erased:2ae85d08018315ae
	// books: customer "order 17": 'o' is no part of a phone number, and without an @ it is no e-mail address
}
