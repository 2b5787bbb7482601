// Package fulfilment is the "fulfilment" Caddy app of Fulfilgate: it owns the
// data directory and the long-running parts of the gateway (the token
// service, the webhook service and the change-feed readers), parses the
// fulfilment global option of the Caddyfile and checks the http app's routes.
// The HTTP handlers (modules/fulfilhttp/...) and the admin API
// (modules/fulfilment/adminapi) reach the running parts only through the
// App's exported accessors. The domain logic lives in the Caddy-free packages
// tokens, webhooks and versioning.
package fulfilment

import (
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

	// clientLimit is the smallest per-partner client limit of the config's
	// portal handlers (0: none has one); see ClientLimit.
	clientLimit atomic.Int32
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
	if err := a.provisionDataDir(); err != nil {
		return err
	}
	if err := a.provisionStorage(ctx); err != nil {
		return err
	}
	if err := errors.Join(
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

// provisionDataDir sets the absolute data directory (default: under
// Caddy's app data directory).
func (a *App) provisionDataDir() error {
	a.dir = a.DataDir
	if a.dir == "" {
		a.dir = defaultDataDir()
	}
	abs, err := filepath.Abs(a.dir)
	if err != nil {
		return fmt.Errorf("data_dir %q: %w", a.dir, err)
	}
	a.dir = abs
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
	fail := func(part string, err error) error {
		if rerr := a.release(st); rerr != nil {
			a.logger.Error("releasing the data dir after a failed start", zap.Error(rerr))
		}
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
	if err := a.startPortal(st); err != nil {
		return fail("portal", err)
	}
	a.state.Store(st)
	a.logger.Info("fulfilment app started", zap.String("data_dir", a.dir), zap.String("instance", instance.ID),
		zap.Int("pid", instance.PID), zap.String("host", instance.Host))
	a.checkSharedPorts()
	return nil
}

// Stop releases this config's hold on the data directory (release).
func (a *App) Stop() error {
	st := a.state.Swap(nil)
	if st == nil {
		return nil
	}
	return a.release(st)
}

// Cleanup releases this config's hold on the data directory if Stop did
// not: Caddy discards a config whose apps all started but whose set-up
// failed afterwards by cancelling it, which calls Cleanup without Stop.
func (a *App) Cleanup() error { return a.Stop() }

// release gives up this config's hold on st, the state of its data
// directory. The database and the background workers close when the last
// config using them lets go.
//
// The parts of st run with the settings of the config that applied them
// last. If that is this config and Caddy runs another one on the same data
// directory, this config never became the running one (a later part of
// its Start, or another app, failed, and Caddy keeps the running config):
// the running config's settings are put back first. A config replaced by a
// successful reload is in force nowhere, and at shutdown no config runs:
// then nothing is put back.
func (a *App) release(st *sharedState) error {
	st.restoreFrom(a, activeApp(a.dir))
	return releaseState(a.dir)
}

// activeApp returns the fulfilment app of the config Caddy runs, if it runs
// on data directory dir; else nil.
func activeApp(dir string) *App {
	a, err := ActiveApp()
	if err != nil || a.dir != dir {
		return nil
	}
	return a
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

// Running reports whether a loaded config has this app's data directory
// open (the accessors then find the running parts).
func (a *App) Running() bool { return a.current() != nil }

// Dir is the data directory, absolute, as provisioned.
func (a *App) Dir() string { return a.dir }

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

// FromContext returns the fulfilment app of ctx's config, for the HTTP
// handlers' Provision. (The app's state is only there once it has started;
// handlers reach the running parts at request time through the accessors
// TokenService, WebhookService and FeedReader, which are nil until then.)
//
// Without the fulfilment global option the app runs with its defaults; a
// warning says so and names its data dir.
func FromContext(ctx caddy.Context) (*App, error) {
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

// ActiveApp returns the fulfilment app of the running config, or an error
// that says why there is none: no config runs, it has no fulfilment app, or
// the app is not running.
func ActiveApp() (*App, error) {
	ctx := caddy.ActiveContext()
	if ctx.Context == nil {
		return nil, errors.New("no config is running")
	}
	v, err := ctx.AppIfConfigured("fulfilment")
	if err != nil {
		return nil, errors.New("the fulfilment app is not configured")
	}
	app := v.(*App)
	if !app.Running() {
		return nil, errors.New("the fulfilment app is not running")
	}
	return app, nil
}

// Interface guards
var (
	_ caddy.App          = (*App)(nil)
	_ caddy.Provisioner  = (*App)(nil)
	_ caddy.CleanerUpper = (*App)(nil)
)
