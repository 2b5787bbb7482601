package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/fulfilgate/fulfilgate/modules/fulfilment"
	"github.com/fulfilgate/fulfilgate/modules/fulfilment/pgstorage"
	"github.com/fulfilgate/fulfilgate/storage/pgstore"
	"github.com/fulfilgate/fulfilgate/storage/transfer"
)

func init() {
	cliCommands = append(cliCommands, addStorageCommands)
}

// databaseURLEnv names the PostgreSQL database when no flag or
// configuration does (the demo Caddyfile reads the same variable).
const databaseURLEnv = "FULFILGATE_DATABASE_URL"

// storageHelp says how the storage commands find the storage.
const storageHelp = `
The storage is, in this order: PostgreSQL at --database-url; Badger in
--data-dir; the storage of the --config file (with --adapter, as caddy run
reads it: data_dir, encryption_key and storage of the fulfilment option);
PostgreSQL at $` + databaseURLEnv + `; the storage of ./Caddyfile; Badger
in the default data directory.

These commands open the storage themselves: they do not talk to a running
gateway. Stop every gateway on the storage first: a Badger data directory is
locked by the gateway that runs on it; a PostgreSQL database is not, and an
export beside running instances may catch a delivery between the queue and
the dead letters.`

// addStorageCommands adds
//
//	caddy fulfilment migrate [--dry-run]
//	caddy fulfilment export [--file F]
//	caddy fulfilment import [--file F]
func addStorageCommands(root *cobra.Command) {
	migrate := &cobra.Command{
		Use:   "migrate [--dry-run] [--database-url URL]",
		Short: "Brings the PostgreSQL schema up to this gateway's version (--dry-run: lists what it would apply)",
		Long: `Applies the database migrations embedded in this gateway to its PostgreSQL
database, as every gateway does at start, under the same advisory lock (so
it is safe beside gateways that start meanwhile, or another migrate). With
--dry-run it lists the migrations it would apply and changes nothing. A
database migrated by a newer gateway is refused, and nothing is changed.
` + storageHelp,
		Args: withUsage(cobra.NoArgs),
		RunE: runMigrate,
	}
	migrate.Flags().Bool("dry-run", false, "List the pending migrations; change nothing")

	export := &cobra.Command{
		Use:   "export [--file F]",
		Short: "Writes the whole state of the storage as NDJSON (to stdout, or to a new file of mode 0600)",
		Long: `Writes the gateway's whole state as a stream of JSON lines: partners, the
clients' secret hashes (never the secrets), the pepper those hashes are keyed
with, the signing keys with their private material, the generated webhook
keys of the configuration's partners, subscriptions, queued deliveries and
dead letters with their attempt logs, the feeds' cursors, seen changes and
rejected changes. ` + "`caddy fulfilment import`" + ` reads it into another storage,
Badger or PostgreSQL.

The export holds private keys: keep it as you keep the data directory or the
database. --file creates a new file readable by its owner only (mode 0600)
and refuses an existing one.
` + storageHelp,
		Args: withUsage(cobra.NoArgs),
		RunE: runExport,
	}
	export.Flags().String("file", "", "Write to this new file (mode 0600) instead of stdout")

	imp := &cobra.Command{
		Use:   "import [--file F]",
		Short: "Reads an export into an empty storage (Badger or PostgreSQL)",
		Long: `Reads a stream written by ` + "`caddy fulfilment export`" + ` (from stdin, or --file)
into the storage, which must be empty: a new data directory, or a new (or
just migrated) PostgreSQL database on which no gateway has started. A
storage that holds anything is refused, saying what it holds. The whole
stream is checked before anything is written: a damaged or cut export
writes nothing.
` + storageHelp,
		Args: withUsage(cobra.NoArgs),
		RunE: runImport,
	}
	imp.Flags().String("file", "", "Read from this file instead of stdin")

	for _, c := range []*cobra.Command{migrate, export, imp} {
		c.Flags().String("database-url", "", "The PostgreSQL database (postgres://user:password@host/db); other users see it in the process list: prefer $"+databaseURLEnv)
		if c != migrate {
			c.Flags().String("data-dir", "", "A Badger data directory")
		}
		root.AddCommand(c)
	}
}

// commandStorage finds the storage as storageHelp says, and names where
// it came from.
func commandStorage(cmd *cobra.Command) (*fulfilment.OfflineStorage, string, error) {
	url, _ := cmd.Flags().GetString("database-url")
	dir := ""
	if cmd.Flags().Lookup("data-dir") != nil {
		dir, _ = cmd.Flags().GetString("data-dir")
	}
	configFlag, _ := cmd.Flags().GetString("config")
	adapterFlag, _ := cmd.Flags().GetString("adapter")
	logger := caddy.Log()
	switch {
	case url != "" && dir != "":
		return nil, "", usageError(cmd, errors.New("give --database-url or --data-dir, not both"))
	case url != "":
		return postgresAt(url, "--database-url")
	case dir != "":
		o, err := fulfilment.BadgerDataDir(dir, logger)
		return o, "--data-dir " + dir, err
	case configFlag != "":
		return configuredStorage(configFlag, adapterFlag)
	case os.Getenv(databaseURLEnv) != "":
		return postgresAt(os.Getenv(databaseURLEnv), "$"+databaseURLEnv)
	}
	if _, err := os.Stat("Caddyfile"); err == nil {
		return configuredStorage("Caddyfile", "caddyfile")
	}
	o, err := fulfilment.ConfiguredStorage(nil, logger)
	return o, "the default data directory", err
}

func postgresAt(url, source string) (*fulfilment.OfflineStorage, string, error) {
	cfg, err := json.Marshal(map[string]any{"apps": map[string]any{"fulfilment": map[string]any{
		"storage": map[string]any{"backend": "postgres", "dsn": url}}}})
	if err != nil {
		return nil, "", err
	}
	o, err := fulfilment.ConfiguredStorage(cfg, caddy.Log())
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", source, err)
	}
	return o, source, nil
}

func configuredStorage(file, adapter string) (*fulfilment.OfflineStorage, string, error) {
	cfg, _, _, err := caddycmd.LoadConfig(file, adapter)
	if err != nil {
		return nil, "", fmt.Errorf("reading %s: %w", file, err)
	}
	o, err := fulfilment.ConfiguredStorage(cfg, caddy.Log())
	if err != nil {
		return nil, "", fmt.Errorf("the storage of %s: %w", file, err)
	}
	return o, "the storage of " + file, nil
}

// migrateTimeout bounds connecting and migrating.
const migrateTimeout = 10 * time.Minute

func runMigrate(cmd *cobra.Command, _ []string) error {
	o, source, err := commandStorage(cmd)
	if err != nil {
		return err
	}
	pg, ok := o.Backend().(*pgstorage.Storage)
	if !ok {
		return fmt.Errorf("%s uses storage %s: migrate is for storage postgres (Badger has no schema to migrate)", source, o.Name())
	}
	dry, _ := cmd.Flags().GetBool("dry-run")
	ctx, cancel := context.WithTimeout(cmd.Context(), migrateTimeout)
	defer cancel()
	res, err := pg.Migrate(ctx, dry)
	if err != nil {
		return err
	}
	if res.Applied == nil {
		res.Applied = []pgstore.Migration{}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return printAnswer(cmd, b)
}

func runExport(cmd *cobra.Command, _ []string) (err error) {
	o, source, err := commandStorage(cmd)
	if err != nil {
		return err
	}
	stores, err := o.Open(true)
	if err != nil {
		return fmt.Errorf("opening %s: %w", source, err)
	}
	defer func() { err = errors.Join(err, stores.Close()) }()
	var out io.Writer = cmd.OutOrStdout()
	if file, _ := cmd.Flags().GetString("file"); file != "" {
		f, ferr := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if ferr != nil {
			return fmt.Errorf("creating the export file (it must not exist yet): %w", ferr)
		}
		defer func() {
			// A failed export leaves no file that looks like one.
			if err = errors.Join(err, f.Close()); err != nil {
				err = errors.Join(err, os.Remove(file))
			}
		}()
		out = f
	}
	counts, err := transfer.Export(out, stores, o.Name(), time.Now())
	if err != nil {
		return fmt.Errorf("exporting %s: %w", source, err)
	}
	return printSummary(cmd.ErrOrStderr(), "exported", o.Name(), counts)
}

func runImport(cmd *cobra.Command, _ []string) (err error) {
	o, source, err := commandStorage(cmd)
	if err != nil {
		return err
	}
	in := cmd.InOrStdin()
	if file, _ := cmd.Flags().GetString("file"); file != "" {
		f, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("opening the export: %w", err)
		}
		defer f.Close()
		in = f
	}
	stores, err := o.Open(false)
	if err != nil {
		return fmt.Errorf("opening %s: %w", source, err)
	}
	defer func() { err = errors.Join(err, stores.Close()) }()
	header, counts, err := transfer.Import(in, stores)
	if err != nil {
		return fmt.Errorf("importing into %s: %w", source, err)
	}
	b, err := json.Marshal(map[string]any{"imported": counts, "from": header.Source, "exported": header.Created, "into": o.Name()})
	if err != nil {
		return err
	}
	return printAnswer(cmd, b)
}

// printSummary writes what an export wrote, as one JSON line.
func printSummary(w io.Writer, verb, backend string, counts transfer.Counts) error {
	b, err := json.Marshal(map[string]any{verb: counts, "from": backend})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
