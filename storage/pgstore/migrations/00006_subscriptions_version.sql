-- The version of the subscriptions: one row, its version raised in the
-- transaction of every subscription create and delete. An instance reads
-- it (one small query) before it fans out a batch of changes, and reloads
-- its subscriptions when it is not the version it loaded them at.

-- +goose Up
CREATE TABLE subscriptions_version (
    one     boolean PRIMARY KEY DEFAULT true CHECK (one),
    version bigint NOT NULL
);
INSERT INTO subscriptions_version (one, version) VALUES (true, 0);

-- +goose Down
DROP TABLE subscriptions_version;
