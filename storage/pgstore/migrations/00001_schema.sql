-- The gateway's state. Times are Unix nanoseconds (bigint, *_ns), as the
-- gateway's records keep them exact. Records the gateway encodes itself
-- (a delivery with its attempt log) are bytea, opaque to the database.

-- +goose Up

-- Secrets of the whole deployment, shared by every instance: "pepper", the
-- key of the clients' secret hashes.
CREATE TABLE gateway_secrets (
    name  text PRIMARY KEY,
    value bytea NOT NULL
);

-- Partners created at run time (the configuration's partners are not
-- stored). webhook_key is the generated key the partner's webhooks are
-- signed with.
CREATE TABLE partners (
    id            text PRIMARY KEY,
    consolidation boolean NOT NULL,
    webhook_key   text NOT NULL,
    disabled      boolean NOT NULL,
    created_ns    bigint
);

-- The generated webhook key of a partner from the configuration that sets
-- none; kept when the partner leaves the configuration.
CREATE TABLE static_webhook_keys (
    partner_id  text PRIMARY KEY,
    webhook_key text NOT NULL,
    created_ns  bigint,
    rotated_ns  bigint
);

-- OAuth2 clients of partners from the configuration or the partners table,
-- hence no foreign key. secret_hash is the keyed hash of the secret (never
-- the secret); secret_version changes with every rotation and is carried in
-- the client's tokens. opaque_version: the version is random (tokens carry
-- it keyed) rather than the secret digest that older versions used.
CREATE TABLE clients (
    id             text PRIMARY KEY,
    partner_id     text NOT NULL,
    secret_hash    bytea NOT NULL,
    secret_version text NOT NULL,
    opaque_version boolean NOT NULL,
    active         boolean NOT NULL,
    created_ns     bigint
);
CREATE INDEX clients_partner ON clients (partner_id);

-- Generated token signing keys with their private material. A retired key
-- still verifies until the tokens it signed have expired, then it is
-- deleted.
CREATE TABLE signing_keys (
    kid        text PRIMARY KEY,
    alg        text NOT NULL,
    material   bytea NOT NULL,
    created_ns bigint,
    retired_ns bigint
);

-- Webhook subscriptions. unique_key (partner, event and the URL's
-- comparison form, NUL-separated) makes a partner's subscription of an
-- event to a URL unique.
CREATE TABLE subscriptions (
    id               text PRIMARY KEY,
    partner_id       text NOT NULL,
    event            text NOT NULL,
    notification_url text NOT NULL,
    created_ns       bigint,
    unique_key       bytea NOT NULL UNIQUE
);
CREATE INDEX subscriptions_partner ON subscriptions (partner_id);

-- The delivery queue: one row per event for one subscription until it is
-- delivered (deleted) or dies (moved to dead_letters). pos is the schedule
-- position: 8 bytes of big-endian Unix nanoseconds of the next attempt,
-- then the delivery id, so the primary key's order is the schedule's.
-- record is the delivery with its attempt log. An instance claims due rows
-- by setting lease_owner and lease_until_ns; a row whose lease has run out
-- (its instance died mid-attempt) can be claimed again.
CREATE TABLE deliveries (
    pos             bytea PRIMARY KEY,
    id              text NOT NULL,
    partner_id      text NOT NULL,
    subscription_id text NOT NULL,
    record          bytea NOT NULL,
    lease_owner     text,
    lease_until_ns  bigint
);
CREATE INDEX deliveries_id ON deliveries (id);
CREATE INDEX deliveries_partner ON deliveries (partner_id);

-- Deliveries that ran out of attempts, kept until expires_ns for replay.
CREATE TABLE dead_letters (
    id              text PRIMARY KEY,
    partner_id      text NOT NULL,
    subscription_id text NOT NULL,
    record          bytea NOT NULL,
    expires_ns      bigint NOT NULL
);
CREATE INDEX dead_letters_expires ON dead_letters (expires_ns, id);

-- Queued deliveries whose records could not be decoded, set aside (never
-- expected: a database written by a newer gateway read by an older one).
CREATE TABLE quarantined_deliveries (
    pos            bytea PRIMARY KEY,
    record         bytea NOT NULL,
    quarantined_ns bigint NOT NULL
);

-- A change feed's position: the "next" of the last page whose changes are
-- all done, and how many changes it ever rejected.
CREATE TABLE feed_cursors (
    feed           text PRIMARY KEY,
    cursor         text,
    rejected_total bigint NOT NULL DEFAULT 0
);

-- Changes a feed has turned into events (or rejected), remembered until
-- seen_until_ns (the dedupe window) so a change read again is not sent
-- again.
CREATE TABLE feed_seen (
    feed          text NOT NULL,
    change_id     text NOT NULL,
    seen_until_ns bigint NOT NULL,
    PRIMARY KEY (feed, change_id)
);
CREATE INDEX feed_seen_expiry ON feed_seen (seen_until_ns);

-- The latest rejected changes of each feed, in a ring of slots (seq modulo
-- the number kept).
CREATE TABLE feed_rejected (
    feed     text NOT NULL,
    slot     integer NOT NULL,
    seq      bigint NOT NULL,
    rejected jsonb NOT NULL,
    PRIMARY KEY (feed, slot)
);

-- +goose Down
DROP TABLE feed_rejected;
DROP TABLE feed_seen;
DROP TABLE feed_cursors;
DROP TABLE quarantined_deliveries;
DROP TABLE dead_letters;
DROP TABLE deliveries;
DROP TABLE subscriptions;
DROP TABLE signing_keys;
DROP TABLE clients;
DROP TABLE static_webhook_keys;
DROP TABLE partners;
DROP TABLE gateway_secrets;
