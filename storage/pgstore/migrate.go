package pgstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
)

// The schema's migrations, numbered SQL files run by goose, each in a
// transaction.
//
//go:embed migrations/*.sql
var migrations embed.FS

// VersionTable is the table that records the applied migrations.
const VersionTable = "fulfilgate_schema_migrations"

// migrationLock is the key of the session advisory lock that serialises
// migrations: instances starting at once migrate one after another, and the
// later ones find nothing left to apply.
const migrationLock int64 = 0x66756c66696c6d67 // "fulfilmg"

// ErrSchemaNewer is returned by Migrate when the database's schema has a
// migration this binary does not know: a newer version of the gateway
// migrated it, and this one must not run on it.
var ErrSchemaNewer = errors.New("the database schema is newer than this gateway")

// Migration is one migration of the schema.
type Migration struct {
	Version int64  `json:"version"`
	Name    string `json:"name"` // the file name, e.g. 00001_schema.sql
}

// MigrateResult says what Migrate did.
type MigrateResult struct {
	From   int64 `json:"from"`   // the schema version found (0: an empty database)
	To     int64 `json:"to"`     // the schema version after (in a dry run: that it would have)
	DryRun bool  `json:"dryRun"` // nothing was applied
	// Applied lists the migrations applied, oldest first (in a dry run,
	// those that would be).
	Applied []Migration `json:"applied"`
}

// Migrate brings the database's schema up to this binary's version,
// holding a PostgreSQL advisory lock meanwhile, so several instances may
// call it at once. With dryRun it applies nothing and reports what it
// would apply. A schema newer than this binary is ErrSchemaNewer, and
// nothing is changed.
func Migrate(ctx context.Context, pool *pgxpool.Pool, dryRun bool) (MigrateResult, error) {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return MigrateResult{}, fmt.Errorf("reading the embedded migrations: %w", err)
	}
	return migrate(ctx, pool, sub, dryRun)
}

// LatestVersion is the schema version this binary migrates to.
func LatestVersion() int64 {
	sub, _ := fs.Sub(migrations, "migrations") // the directory is embedded
	ms, _ := embeddedMigrations(sub)           // the file names are this package's own
	return ms[len(ms)-1].Version
}

func migrate(ctx context.Context, pool *pgxpool.Pool, fsys fs.FS, dryRun bool) (res MigrateResult, err error) {
	res.DryRun = dryRun
	known, err := embeddedMigrations(fsys)
	if err != nil {
		return res, err
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	unlock, err := lockMigrations(ctx, pool)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, unlock()) }()

	applied, err := appliedVersions(ctx, db)
	if err != nil {
		return res, err
	}
	if len(applied) > 0 {
		res.From = slices.Max(applied)
	}
	latest := known[len(known)-1].Version
	if res.From > latest {
		return res, fmt.Errorf("%w: the database is at schema version %d and this gateway knows versions up to %d; run the gateway version that migrated it, or a newer one",
			ErrSchemaNewer, res.From, latest)
	}
	res.To = res.From
	if dryRun {
		for _, m := range known {
			if !slices.Contains(applied, m.Version) {
				res.Applied = append(res.Applied, m)
				res.To = max(res.To, m.Version)
			}
		}
		return res, nil
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithTableName(VersionTable),
		goose.WithDisableGlobalRegistry(true), goose.WithLogger(goose.NopLogger()))
	if err != nil {
		return res, fmt.Errorf("reading the migrations: %w", err)
	}
	results, err := p.Up(ctx)
	for _, r := range results {
		if r.Error == nil {
			res.Applied = append(res.Applied, Migration{Version: r.Source.Version, Name: path.Base(r.Source.Path)})
			res.To = max(res.To, r.Source.Version)
		}
	}
	if err != nil {
		return res, fmt.Errorf("migrating the schema from version %d: %w", res.From, err)
	}
	return res, nil
}

// embeddedMigrations lists the migrations of fsys, oldest first.
func embeddedMigrations(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("listing the migrations: %w", err)
	}
	var out []Migration
	for _, n := range names {
		v, err := goose.NumericComponent(n)
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", n, err)
		}
		out = append(out, Migration{Version: v, Name: n})
	}
	if len(out) == 0 {
		return nil, errors.New("no migrations embedded")
	}
	slices.SortFunc(out, func(a, b Migration) int { return int(a.Version - b.Version) })
	return out, nil
}

// lockMigrations waits for the migration lock on a connection of its own
// (not the pool's, so a pool of one connection still migrates), held until
// unlock closes it; should this process die meanwhile, the server ends the
// session and frees the lock.
func lockMigrations(ctx context.Context, pool *pgxpool.Pool) (unlock func() error, err error) {
	conn, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("connecting to take the migration lock: %w", err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("waiting for the migration lock: %w", err)
	}
	return func() error {
		// Ending the session releases the lock.
		if err := conn.Close(context.WithoutCancel(ctx)); err != nil {
			return fmt.Errorf("releasing the migration lock: %w", err)
		}
		return nil
	}, nil
}

// appliedVersions lists the versions recorded as applied (none before the
// first migration, when the version table does not exist yet).
func appliedVersions(ctx context.Context, db *sql.DB) ([]int64, error) {
	store, err := database.NewStore(database.DialectPostgres, VersionTable)
	if err != nil {
		return nil, fmt.Errorf("opening the version table: %w", err)
	}
	ext, ok := store.(database.StoreExtender)
	if !ok {
		return nil, errors.New("goose's postgres store cannot tell whether its table exists")
	}
	exists, err := ext.TableExists(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("looking for the version table %s: %w", VersionTable, err)
	}
	if !exists {
		return nil, nil
	}
	rows, err := store.ListMigrations(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("reading the version table %s: %w", VersionTable, err)
	}
	var out []int64
	for _, r := range rows {
		if r.IsApplied && r.Version > 0 && !slices.Contains(out, r.Version) {
			out = append(out, r.Version)
		}
	}
	return out, nil
}
