// Package storage is the seam between the domain packages and the
// databases. The domain packages own the interfaces they store through
// (tokens.Store, webhooks.Storage, feed.Store) and import no database
// driver; a backend implements all of them:
//
//   - storage/badgerstore: Badger, embedded, the default (one process per
//     data directory);
//   - storage/pgstore: PostgreSQL, for several gateway instances;
//   - storage/transfer: the copy of a whole state from one backend to
//     another (export and import, a stream of JSON lines);
//   - storage/storagetest: the contract every backend passes, one table of
//     behaviours run against each.
//
// This package holds no code: its test keeps the domain packages free of
// drivers, backends and Caddy.
package storage
