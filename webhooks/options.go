package webhooks

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/fulfilgate/fulfilgate/webhooks/netpolicy"
)

// Errors of the subscription store and the operations API.
var (
	// ErrNotFound: no such subscription or delivery (or it belongs to
	// another partner).
	ErrNotFound = errors.New("not found")
	// ErrLimit: the partner already has MaxSubscriptionsPerPartner
	// subscriptions (answered 409).
	ErrLimit = errors.New("subscription limit reached")
)

// ValidationError names the request field that is wrong and why.
type ValidationError struct{ Field, Reason string }

func (e *ValidationError) Error() string { return e.Field + ": " + e.Reason }

// Defaults of Options.
const (
	DefaultMaxSubscriptionsPerPartner = 100
	DefaultTimeout                    = 10 * time.Second
	DefaultMaxAttempts                = 185
	DefaultRetryPeriod                = 24 * time.Hour
	DefaultDeadRetention              = 7 * 24 * time.Hour
	DefaultPerTargetConcurrency       = 4
	DefaultWorkers                    = 64
	DefaultUserAgent                  = "Fulfilgate-Webhooks/1"
	DefaultDeliveryLogSize            = 100
	MaxDeliveryLogSize                = 1000
)

// Options configure a Service. Zero fields take the documented defaults.
type Options struct {
	// Storage is where the state is kept (required); a write is durable
	// when it returns. Reconfigure compares it with ==: use a pointer.
	Storage Storage
	Logger  *zap.Logger // default: zap.NewNop()

	MaxSubscriptionsPerPartner int               // default 100
	AllowHTTP                  bool              // accept plain http notification URLs (default false: https only)
	Policy                     *netpolicy.Policy // SSRF policy and the gateway's own listeners; default: public addresses only

	Timeout       time.Duration // per attempt, default 10s
	MaxAttempts   int           // default 185
	RetryPeriod   time.Duration // default 24h after the first attempt
	DeadRetention time.Duration // default 7 days
	// DeliveryLogSize is how many delivered deliveries the delivery log
	// keeps per subscription (the latest; none older than DeadRetention).
	// Default 100; negative keeps none.
	DeliveryLogSize      int
	PerTargetConcurrency int // concurrent attempts per notification URL host, default 4
	Workers              int // concurrent attempts in all, default 64
	// PerPartnerConcurrency caps one partner's attempts in flight, so that
	// a partner's slow or dead receivers hold at most this many workers;
	// partners with due deliveries take the free workers in turn. Default:
	// a quarter of Workers (16 of 64), at least 1; at most Workers.
	PerPartnerConcurrency int
	UserAgent             string // default "Fulfilgate-Webhooks/1"
	StandardWebhooks      bool   // also send webhook-id, webhook-timestamp, webhook-signature

	// WebhookKey returns the partner's current webhook key; it is called at
	// every attempt, so a rotated key applies to retries. Required.
	WebhookKey func(partnerID string) ([]byte, error)

	// RefreshInterval: with a Storage that several instances share
	// (ChangeNotifier), how often the subscriptions are reloaded without
	// a notification. Default DefaultRefreshInterval; fixed at New.
	RefreshInterval time.Duration

	Clock func() time.Time // default time.Now
	Rand  func() float64   // uniform in [0,1); default math/rand/v2.Float64

	// HTTPClient, when set, is used as it is for every partner (its
	// redirect policy and dialer are the caller's responsibility, and
	// Policy's partner rules apply at registration only). Default: a
	// client that dials through Policy.Control (one per partner that a
	// rule names, through Policy.ForPartner), uses no proxy and follows no
	// redirects.
	HTTPClient *http.Client
	Observer   Observer // optional metrics hooks

	// Retry overrides the back-off shape (Base, Cap); MaxAttempts and
	// RetryPeriod above win over its fields. Default DefaultRetryPolicy.
	Retry *RetryPolicy
}

// Outcome of one delivery, reported to Observer.Delivery.
type Outcome string

// Delivery outcomes.
const (
	OutcomeSuccess Outcome = "success" // 2xx received: the delivery left the queue
	OutcomeFailure Outcome = "failure" // attempt failed, a retry is scheduled
	OutcomeDead    Outcome = "dead"    // attempt failed and the limits are reached: moved to dead letters
	OutcomeDropped Outcome = "dropped" // the subscription was deleted: delivery discarded
)

// Observer receives metrics events. Methods are called from dispatcher
// goroutines and must be fast and safe for concurrent use.
type Observer interface {
	// Delivery is called once per finished attempt (or drop) with its outcome.
	Delivery(event string, outcome Outcome)
	// Attempt reports the latency of one HTTP attempt and its status code
	// (0 for a transport error or time-out).
	Attempt(latency time.Duration, status int)
	// Depth reports the current number of queued and dead deliveries after
	// each change.
	Depth(queued, dead int64)
}

type nopObserver struct{}

func (nopObserver) Delivery(string, Outcome)   {}
func (nopObserver) Attempt(time.Duration, int) {}
func (nopObserver) Depth(queued, dead int64)   {}

// CheckUserAgent refuses a user agent that cannot be sent as one header
// line: a line break or another control character would end the header
// or inject others into every delivery.
func CheckUserAgent(ua string) error {
	if strings.ContainsFunc(ua, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return errors.New("must be one line without control characters")
	}
	return nil
}

func (o *Options) setDefaults() error {
	if o.Storage == nil {
		return errors.New("webhooks: Options.Storage is required")
	}
	if o.WebhookKey == nil {
		return errors.New("webhooks: Options.WebhookKey is required")
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.MaxSubscriptionsPerPartner <= 0 {
		o.MaxSubscriptionsPerPartner = DefaultMaxSubscriptionsPerPartner
	}
	if o.Policy == nil {
		o.Policy = &netpolicy.Policy{}
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.RetryPeriod <= 0 {
		o.RetryPeriod = DefaultRetryPeriod
	}
	if o.DeadRetention <= 0 {
		o.DeadRetention = DefaultDeadRetention
	}
	if o.DeliveryLogSize == 0 {
		o.DeliveryLogSize = DefaultDeliveryLogSize
	}
	if o.DeliveryLogSize > MaxDeliveryLogSize {
		return fmt.Errorf("webhooks: DeliveryLogSize (%d) is more than %d", o.DeliveryLogSize, MaxDeliveryLogSize)
	}
	if o.PerTargetConcurrency <= 0 {
		o.PerTargetConcurrency = DefaultPerTargetConcurrency
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.PerPartnerConcurrency <= 0 {
		o.PerPartnerConcurrency = max(o.Workers/4, 1)
	}
	if o.PerPartnerConcurrency > o.Workers {
		return fmt.Errorf("webhooks: PerPartnerConcurrency (%d) is more than Workers (%d)", o.PerPartnerConcurrency, o.Workers)
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if err := CheckUserAgent(o.UserAgent); err != nil {
		return fmt.Errorf("webhooks: Options.UserAgent %w", err)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	if o.Observer == nil {
		o.Observer = nopObserver{}
	}
	rp := DefaultRetryPolicy
	if o.Retry != nil {
		rp = *o.Retry
	}
	rp.MaxAttempts, rp.Period = o.MaxAttempts, o.RetryPeriod
	if rp.Base <= 0 {
		rp.Base = DefaultRetryPolicy.Base
	}
	if rp.Cap < rp.Base {
		rp.Cap = rp.Base
	}
	o.Retry = &rp
	if o.HTTPClient == nil {
		o.HTTPClient = newHTTPClient(o.Policy, o.PerTargetConcurrency)
	}
	return nil
}
