-- The version of the subscriptions: one row, its version raised by a
-- trigger on every write to subscriptions (whatever makes it: this
-- gateway, an older one during a rollout, an operator's SQL), in the
-- writing transaction. An instance reads it (one small query) before it
-- fans out a batch of changes, and reloads its subscriptions when it is
-- not the version it loaded them at.

-- +goose Up
CREATE TABLE subscriptions_version (
    one     boolean PRIMARY KEY DEFAULT true CHECK (one),
    version bigint NOT NULL
);
INSERT INTO subscriptions_version (one, version) VALUES (true, 0);

-- +goose StatementBegin
CREATE FUNCTION fulfilgate_subscriptions_changed() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE subscriptions_version SET version = version + 1;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER subscriptions_changed AFTER INSERT OR UPDATE OR DELETE ON subscriptions
    FOR EACH ROW EXECUTE FUNCTION fulfilgate_subscriptions_changed();
CREATE TRIGGER subscriptions_truncated AFTER TRUNCATE ON subscriptions
    FOR EACH STATEMENT EXECUTE FUNCTION fulfilgate_subscriptions_changed();

-- +goose Down
DROP TRIGGER subscriptions_truncated ON subscriptions;
DROP TRIGGER subscriptions_changed ON subscriptions;
DROP FUNCTION fulfilgate_subscriptions_changed();
DROP TABLE subscriptions_version;
