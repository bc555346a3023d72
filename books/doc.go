// Package books moves, prunes and erases the books as tables, on either
// engine, without knowing the tables by heart: the schema is read from the
// database (ledger/engine's Books, which each store provides), so that a
// column a later migration adds is moved, pruned or searched like the rest.
//
//   - Copy moves every table of the ledger and River's job tables from one
//     database to another (SQLite to PostgreSQL to grow, PostgreSQL to
//     PostgreSQL, PostgreSQL to SQLite), in bulk, from one snapshot of the
//     source, into a target migrated to the same version and empty, and
//     then verifies counts, amount sums and key checksums table by table.
//   - Prune removes the raw payloads the books no longer need after a
//     while (sources, callback bodies, released quarantine input, the
//     detail and notes of long-resolved findings), keeping amounts, ids and
//     links, and never the evidence of an open finding.
//   - Erase replaces a person's phone number or e-mail address, in all its
//     forms and everywhere, with a keyed one-way token, and records who
//     asked.
//
// It never writes to a copy's source, never deletes a row, and changes no
// amount, time or integer id. It holds no SQL of its own: the engines read
// and write, this package decides what.
package books
