package sqlitestore

import "context"

// OrphanSources counts the sightings whose provider transaction is missing:
// none may be, since the foreign key was dropped for the one write path
// that guarantees it (UpsertProviderTxns).
func OrphanSources(s *Store) (int, error) {
	var n int
	err := s.sqldb.QueryRowContext(context.Background(), `
		SELECT count(*) FROM provider_txn_sources x
		WHERE NOT EXISTS (SELECT 1 FROM provider_txns p WHERE p.provider = x.provider AND p.txn_id = x.txn_id)`).Scan(&n)
	return n, err
}
