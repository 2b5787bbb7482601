// Package caddymodule is the Caddy glue of Fulfilgate: the "fulfilment" app,
// its HTTP handlers, Caddyfile support, admin API routes, CLI subcommands and
// metrics. The domain logic lives in the Caddy-free packages tokens,
// webhooks and versioning; this package only wires them into Caddy.
package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/internal/datadir"
)

func init() {
	caddy.RegisterModule(new(App))
}

// App is the "fulfilment" Caddy app. It owns the data directory (a Badger
// database) and the long-running parts of the gateway: token signing keys and
// partners, the webhook queue and dispatcher, and the change-feed readers.
//
// The Badger handle and everything that uses it live in a caddy.UsagePool
// keyed by the data directory, so that they outlive a config reload (Caddy
// starts the new config before it stops the old one, and Badger holds an
// exclusive directory lock). The database is opened in Start, not Provision,
// so that `caddy validate` works while a server runs.
type App struct {
	// DataDir is where the Badger database lives. Default: the "fulfilgate"
	// folder under Caddy's app data directory. It is created with mode
	// 0700; an existing one readable by others is tightened at start (or a
	// warning logged where the gateway's user does not own it).
	DataDir string `json:"data_dir,omitempty"`

	// EncryptionKey, when set, encrypts the data directory at rest (AES,
	// Badger's encryption): the Base64 or hex of 16, 24 or 32 random bytes
	// (`caddy fulfilment secret` prints one). Use a placeholder such as
	// {env.FULFILGATE_ENCRYPTION_KEY}: the configuration is readable on the
	// admin API. A data directory keeps the encryption it was created with:
	// a different key, or none, is refused at start. Default: none.
	EncryptionKey string `json:"encryption_key,omitempty"`

	// StorageRaw is the storage backend, a fulfilment.storage module named
	// by its "backend" key. Default: badger (Badger in DataDir).
	StorageRaw json.RawMessage `json:"storage,omitempty" caddy:"namespace=fulfilment.storage inline_key=backend"`

	// Tokens configures partners, clients and access tokens.
	Tokens *TokensConfig `json:"tokens,omitempty"`

	// Webhooks configures subscriptions and webhook delivery.
	Webhooks *WebhooksConfig `json:"webhooks,omitempty"`

	// Feeds are the upstream change feeds turned into partner events.
	Feeds []*FeedConfig `json:"feeds,omitempty"`

	ctx     caddy.Context
	logger  *zap.Logger
	storage StorageBackend
	dir     string
	encKey  []byte // the decoded EncryptionKey, nil without one

	// state is set by Start and cleared by Stop; request handlers read it
	// without locks.
	state atomic.Pointer[sharedState]
}

// CaddyModule returns the Caddy module information.
func (*App) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "fulfilment",
		New: func() caddy.Module { return new(App) },
	}
}

// Provision validates the configuration. It opens nothing on disk.
func (a *App) Provision(ctx caddy.Context) error {
	a.ctx = ctx
	a.logger = ctx.Logger()
	a.dir = a.DataDir
	if a.dir == "" {
		a.dir = defaultDataDir()
	}
	abs, err := filepath.Abs(a.dir)
	if err != nil {
		return fmt.Errorf("data_dir %q: %v", a.dir, err)
	}
	a.dir = abs
	if err := a.provisionStorage(ctx); err != nil {
		return err
	}
	if err := errors.Join(
		registerGatewayMetrics(ctx.GetMetricsRegistry()),
		a.provisionEncryption(),
		a.provisionTokens(ctx),
		a.provisionWebhooks(ctx),
		a.provisionFeeds(ctx),
	); err != nil {
		return err
	}
	return a.checkRoutes(ctx)
}

// checkRoutes runs the configuration checks of the http app's routes
// (route_check.go): it refuses the configuration for their errors and logs
// their warnings. The http app is provisioned by then, or is being
// provisioned (a handler of it provisioned this app), so its routes are
// complete in one form or the other.
func (a *App) checkRoutes(ctx caddy.Context) error {
	v, err := ctx.AppIfConfigured("http")
	if err != nil {
		// No http app, nothing to check; or one that failed to load,
		// which Caddy reports itself.
		return nil
	}
	httpApp, ok := v.(*caddyhttp.App)
	if !ok {
		return nil
	}
	f, err := checkHTTPRoutes(httpApp)
	if err != nil {
		return fmt.Errorf("reading the http routes: %w", err)
	}
	for _, w := range f.warnings {
		a.logger.Warn(w)
	}
	if len(f.errors) > 0 {
		return errors.New(strings.Join(f.errors, "; "))
	}
	return nil
}

// provisionStorage loads the storage module (Badger when none is given).
func (a *App) provisionStorage(ctx caddy.Context) error {
	if a.StorageRaw == nil {
		a.storage = new(BadgerStorage)
		return nil
	}
	mod, err := ctx.LoadModule(a, "StorageRaw")
	if err != nil {
		return fmt.Errorf("loading the storage module: %w", err)
	}
	backend, ok := mod.(StorageBackend)
	if !ok {
		return fmt.Errorf("storage module %T is not a storage backend", mod)
	}
	a.storage = backend
	return nil
}

// defaultDataDir is the data dir of an app without data_dir.
func defaultDataDir() string {
	return filepath.Join(caddy.AppDataDir(), "fulfilgate")
}

// Start opens (or shares, across a reload) the data directory and starts the
// subsystems that use it.
func (a *App) Start() error {
	st, err := acquireState(a.dir, a.encKey, a.storage, a.logger)
	if err != nil {
		return err
	}
	st.startedOn(a)
	fail := func(part string, err error) error {
		st.restoreFrom(a) // the running config's settings, if this one's were applied
		_ = releaseState(a.dir)
		return fmt.Errorf("%s: %w", part, err)
	}
	if err := a.startTokens(st); err != nil {
		return fail("tokens", err)
	}
	if err := a.startWebhooks(st); err != nil {
		return fail("webhooks", err)
	}
	if err := a.startFeeds(st); err != nil {
		return fail("feeds", err)
	}
	a.state.Store(st)
	if a.ctx.Context != nil {
		// Caddy may discard a config whose apps all started (finishing its
		// set-up failed) by cancelling its context without Stop: stop then
		// (after a Stop, this one does nothing).
		context.AfterFunc(a.ctx, func() { _ = a.Stop() })
	}
	a.logger.Info("fulfilment app started", zap.String("data_dir", a.dir), zap.String("instance", instance.ID),
		zap.Int("pid", instance.PID), zap.String("host", instance.Host))
	a.checkSharedPorts()
	return nil
}

// Stop releases this config's hold on the data directory. The database and
// the background workers close when the last config using them stops. If
// this config never became the running one (another app of it failed to
// start) while its settings were applied to the shared parts, the running
// config's settings are put back first.
func (a *App) Stop() error {
	st := a.state.Swap(nil)
	if st == nil {
		return nil
	}
	st.restoreFrom(a) // another app of this config failed to start
	return releaseState(a.dir)
}

// current returns the shared state of this app's data dir, or nil when no
// loaded config has it open (handlers then answer 503).
//
// Caddy starts and stops a config's apps in map order, so during a reload
// this config's HTTP server may serve before this app's Start, or after its
// Stop while the server drains. In those gaps the other config (old or new)
// holds the same data dir open, and its state is the right one to use. The
// fallback reads the pool only in those gaps, never on the steady path.
func (a *App) current() *sharedState {
	if st := a.state.Load(); st != nil {
		return st
	}
	return pooledState(a.dir)
}

// provisionEncryption resolves and decodes EncryptionKey. A key that is
// set but empty after its placeholders (an unset environment variable)
// fails: the gateway would otherwise start unencrypted.
func (a *App) provisionEncryption() error {
	if a.EncryptionKey == "" {
		return nil
	}
	v := strings.TrimSpace(caddy.NewReplacer().ReplaceKnown(a.EncryptionKey, ""))
	if v == "" {
		return errors.New("encryption_key is empty after placeholders: is its environment variable set?")
	}
	key, err := datadir.ParseEncryptionKey(v)
	if err != nil {
		return fmt.Errorf("encryption_key: %w", err)
	}
	if !strings.Contains(a.EncryptionKey, "{") {
		a.logger.Warn("encryption_key is written into the configuration, which the admin API shows; use a placeholder such as {env.FULFILGATE_ENCRYPTION_KEY}")
	}
	a.encKey = key
	return nil
}

// fulfilmentApp returns the fulfilment app of ctx's config, for the HTTP
// handlers' Provision. (The app's state is only there once it has started;
// handlers reach it at request time through current().)
//
// Without the fulfilment global option the app runs with its defaults; a
// warning says so and names its data dir.
func fulfilmentApp(ctx caddy.Context) (*App, error) {
	v, err := ctx.AppIfConfigured("fulfilment")
	if errors.Is(err, caddy.ErrNotConfigured) {
		ctx.Logger().Warn("the fulfilment app is not configured (no fulfilment global option): it runs with its defaults, partners only from the admin API and its data in " +
			defaultDataDir() + "; add the fulfilment global option to choose")
		v, err = ctx.App("fulfilment")
	}
	if err != nil {
		return nil, fmt.Errorf("loading the fulfilment app: %w", err)
	}
	return v.(*App), nil
}

// Interface guards
var (
	_ caddy.App         = (*App)(nil)
	_ caddy.Provisioner = (*App)(nil)
)
