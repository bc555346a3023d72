package pgstore

import "context"

// Translate exposes translate to the external tests.
var Translate = translate

// OrphanSources counts the sightings whose provider transaction is missing:
// none may be, since the foreign key was dropped for the one write path
// that guarantees it (UpsertProviderTxns).
func OrphanSources(s *Store) (int, error) {
	var n int
	err := s.pool.QueryRow(context.Background(), `
		SELECT count(*) FROM provider_txn_sources x
		WHERE NOT EXISTS (SELECT FROM provider_txns p WHERE p.provider = x.provider AND p.txn_id = x.txn_id)`).Scan(&n)
	return n, err
}

// OrphanAttempts counts the attempts whose intent is missing: none may be,
// since the foreign key was dropped for the write paths that guarantee it.
func OrphanAttempts(s *Store) (int, error) {
	var n int
	err := s.pool.QueryRow(context.Background(), `
		SELECT count(*) FROM attempts a WHERE NOT EXISTS (SELECT FROM intents i WHERE i.key = a.intent_key)`).Scan(&n)
	return n, err
}
