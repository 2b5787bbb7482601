-- Which gateway instance reads each change feed. Several instances share
-- the database; only the holder of a feed's lease polls it, and renews the
-- lease before until_ns (by its own clock). Once until_ns has passed,
-- another instance may take the lease; each new holder gets a new token,
-- and a page's writes are committed only if the lease still has the token
-- the page was read under, so a holder that lost the lease stores nothing.

-- +goose Up
CREATE TABLE feed_leases (
    feed     text PRIMARY KEY,
    holder   text,
    until_ns bigint NOT NULL,
    token    bigint NOT NULL
);

-- +goose Down
DROP TABLE feed_leases;
