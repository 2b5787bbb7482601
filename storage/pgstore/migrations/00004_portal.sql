-- The partner portal: sign-in links, sessions, the audit log; and what the
-- portal shows and does with clients (a hint of the secret, the previous
-- secret during a rotation's grace period, the last use).

-- +goose Up

-- Single-use sign-in links. hash is the SHA-256 of the link's secret
-- (never the secret).
CREATE TABLE portal_links (
    id         text PRIMARY KEY,
    partner_id text NOT NULL,
    hash       bytea NOT NULL,
    created_ns bigint NOT NULL,
    expires_ns bigint NOT NULL
);

-- Portal sessions. hash is the SHA-256 of the session's secret; idle_ns is
-- the idle limit the session was opened with.
CREATE TABLE portal_sessions (
    id           text PRIMARY KEY,
    partner_id   text NOT NULL,
    hash         bytea NOT NULL,
    created_ns   bigint NOT NULL,
    last_seen_ns bigint NOT NULL,
    expires_ns   bigint NOT NULL,
    idle_ns      bigint NOT NULL,
    addr         text NOT NULL,
    user_agent   text NOT NULL
);

-- The audit log of the portal; seq orders records of the same nanosecond.
CREATE TABLE portal_audit (
    seq        bigserial PRIMARY KEY,
    at_ns      bigint NOT NULL,
    partner_id text NOT NULL,
    actor      text NOT NULL,
    session_id text NOT NULL,
    action     text NOT NULL,
    target     text NOT NULL,
    outcome    text NOT NULL,
    detail     text NOT NULL
);
CREATE INDEX portal_audit_at ON portal_audit (at_ns);

-- A hint of a client's secret (its last characters), and the keyed hash of
-- the previous secret with the end of its grace period after a rotation.
ALTER TABLE clients ADD COLUMN secret_hint text NOT NULL DEFAULT '';
ALTER TABLE clients ADD COLUMN prev_secret_hash bytea;
ALTER TABLE clients ADD COLUMN prev_until_ns bigint;

-- When each client (also one from the configuration) last got a token.
CREATE TABLE client_usage (
    client_id    text PRIMARY KEY,
    last_used_ns bigint NOT NULL
);

-- +goose Down
DROP TABLE client_usage;
ALTER TABLE clients DROP COLUMN prev_until_ns;
ALTER TABLE clients DROP COLUMN prev_secret_hash;
ALTER TABLE clients DROP COLUMN secret_hint;
DROP TABLE portal_audit;
DROP TABLE portal_sessions;
DROP TABLE portal_links;
