-- The gateway's state. Times are timestamptz (microseconds); ids are the
-- gateway's own strings.

-- +goose Up

-- Secrets of the whole deployment, shared by every instance: "pepper", the
-- key of the clients' secret hashes.
CREATE TABLE gateway_secrets (
    name       text PRIMARY KEY,
    value      bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Partners created at run time (the configuration's partners are not
-- stored). webhook_key is the generated key the partner's webhooks are
-- signed with.
CREATE TABLE partners (
    id            text PRIMARY KEY,
    consolidation boolean NOT NULL DEFAULT false,
    webhook_key   text NOT NULL,
    disabled      boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL
);

-- The generated webhook key of a partner from the configuration that sets
-- none; kept when the partner leaves the configuration.
CREATE TABLE static_webhook_keys (
    partner_id  text PRIMARY KEY,
    webhook_key text NOT NULL,
    created_at  timestamptz NOT NULL,
    rotated_at  timestamptz
);

-- OAuth2 clients of partners from the configuration or the partners table,
-- hence no foreign key. secret_hash is the keyed hash of the secret (never
-- the secret); secret_version changes with every rotation and is carried in
-- the client's tokens. opaque_version: the version is random (tokens carry
-- it keyed) rather than the secret digest that older versions used.
CREATE TABLE clients (
    id             text PRIMARY KEY,
    partner_id     text NOT NULL,
    secret_hash    bytea NOT NULL CHECK (length(secret_hash) = 32),
    secret_version text NOT NULL,
    opaque_version boolean NOT NULL DEFAULT true,
    active         boolean NOT NULL DEFAULT true,
    created_at     timestamptz NOT NULL
);
CREATE INDEX clients_partner ON clients (partner_id);

-- Generated token signing keys. A retired key still verifies until the
-- tokens it signed have expired, then it is deleted.
CREATE TABLE signing_keys (
    kid        text PRIMARY KEY,
    alg        text NOT NULL,
    material   bytea NOT NULL,
    created_at timestamptz NOT NULL,
    retired_at timestamptz
);

-- Webhook subscriptions. url_key is the notification URL in the form that
-- decides whether two subscriptions are the same (scheme and host lower
-- case): a partner subscribes an event to a URL once.
CREATE TABLE subscriptions (
    id               text PRIMARY KEY,
    partner_id       text NOT NULL,
    event            text NOT NULL,
    notification_url text NOT NULL,
    url_key          text NOT NULL,
    created_at       timestamptz NOT NULL,
    CONSTRAINT subscriptions_unique UNIQUE (partner_id, event, url_key)
);

-- The delivery queue: one row per event for one subscription, until it is
-- delivered (deleted) or dies (moved to dead_letters). due_at is the next
-- attempt. An instance claims a due row by setting lease_owner and
-- lease_until; a row whose lease has run out (its instance died mid-attempt)
-- is due again. attempt_log holds the latest attempts (JSON array of
-- {at, attempt, status, error, latencyNs}).
CREATE TABLE deliveries (
    id               text PRIMARY KEY,
    subscription_id  text NOT NULL,
    partner_id       text NOT NULL,
    event            text NOT NULL,
    identifier       text NOT NULL,
    url              text NOT NULL,
    test             boolean NOT NULL DEFAULT false,
    attempts         integer NOT NULL DEFAULT 0,
    total_attempts   integer NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL,
    first_attempt_at timestamptz,
    due_at           timestamptz NOT NULL,
    lease_owner      text,
    lease_until      timestamptz,
    attempt_log      jsonb NOT NULL DEFAULT '[]'
);
CREATE INDEX deliveries_due ON deliveries (due_at);
CREATE INDEX deliveries_partner ON deliveries (partner_id, due_at);
CREATE INDEX deliveries_subscription ON deliveries (subscription_id);

-- Deliveries that ran out of attempts, kept until expires_at for replay.
CREATE TABLE dead_letters (
    id               text PRIMARY KEY,
    subscription_id  text NOT NULL,
    partner_id       text NOT NULL,
    event            text NOT NULL,
    identifier       text NOT NULL,
    url              text NOT NULL,
    test             boolean NOT NULL DEFAULT false,
    attempts         integer NOT NULL,
    total_attempts   integer NOT NULL,
    created_at       timestamptz NOT NULL,
    first_attempt_at timestamptz,
    died_at          timestamptz NOT NULL,
    expires_at       timestamptz NOT NULL,
    attempt_log      jsonb NOT NULL DEFAULT '[]'
);
CREATE INDEX dead_letters_expires ON dead_letters (expires_at);
CREATE INDEX dead_letters_partner ON dead_letters (partner_id, died_at);
CREATE INDEX dead_letters_subscription ON dead_letters (subscription_id);

-- A change feed's position: the "next" of the last page whose changes are
-- all done, and how many changes it ever rejected.
CREATE TABLE feed_cursors (
    feed           text PRIMARY KEY,
    cursor         text NOT NULL DEFAULT '',
    rejected_total bigint NOT NULL DEFAULT 0,
    updated_at     timestamptz NOT NULL DEFAULT now()
);

-- Changes a feed has turned into events (or rejected), remembered until
-- expires_at (the dedupe window) so a change read again is not sent again.
CREATE TABLE feed_seen (
    feed       text NOT NULL,
    change_id  text NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (feed, change_id)
);
CREATE INDEX feed_seen_expires ON feed_seen (expires_at);

-- The latest rejected changes of each feed (the last 100 are kept).
CREATE TABLE feed_rejected (
    feed        text NOT NULL,
    seq         bigint NOT NULL,
    change_id   text NOT NULL DEFAULT '',
    partner_id  text NOT NULL DEFAULT '',
    kind        text NOT NULL DEFAULT '',
    change      text NOT NULL DEFAULT '',
    reason      text NOT NULL,
    source      text NOT NULL,
    rejected_at timestamptz NOT NULL,
    raw         text NOT NULL DEFAULT '',
    PRIMARY KEY (feed, seq)
);

-- +goose Down
DROP TABLE feed_rejected;
DROP TABLE feed_seen;
DROP TABLE feed_cursors;
DROP TABLE dead_letters;
DROP TABLE deliveries;
DROP TABLE subscriptions;
DROP TABLE signing_keys;
DROP TABLE clients;
DROP TABLE static_webhook_keys;
DROP TABLE partners;
DROP TABLE gateway_secrets;
