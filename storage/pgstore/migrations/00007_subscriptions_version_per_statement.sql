-- The subscriptions' version is raised once per statement that wrote
-- subscriptions, not once per row: a statement writing many rows (an
-- operator's bulk SQL, say) updates the version row once in its
-- transaction instead of once for each of them. A statement that wrote no
-- row leaves the version as it is. PostgreSQL allows a transition table
-- only on a trigger of one event, so there is one trigger per event, all
-- calling one function that reads its trigger's transition table. TRUNCATE
-- keeps its trigger of 00006 (a TRUNCATE has no transition table).

-- +goose Up
DROP TRIGGER subscriptions_changed ON subscriptions;

-- +goose StatementBegin
CREATE FUNCTION fulfilgate_subscriptions_written() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF EXISTS (SELECT FROM written_rows) THEN
        UPDATE subscriptions_version SET version = version + 1;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER subscriptions_inserted AFTER INSERT ON subscriptions
    REFERENCING NEW TABLE AS written_rows
    FOR EACH STATEMENT EXECUTE FUNCTION fulfilgate_subscriptions_written();
CREATE TRIGGER subscriptions_updated AFTER UPDATE ON subscriptions
    REFERENCING NEW TABLE AS written_rows
    FOR EACH STATEMENT EXECUTE FUNCTION fulfilgate_subscriptions_written();
CREATE TRIGGER subscriptions_deleted AFTER DELETE ON subscriptions
    REFERENCING OLD TABLE AS written_rows
    FOR EACH STATEMENT EXECUTE FUNCTION fulfilgate_subscriptions_written();

-- +goose Down
DROP TRIGGER subscriptions_deleted ON subscriptions;
DROP TRIGGER subscriptions_updated ON subscriptions;
DROP TRIGGER subscriptions_inserted ON subscriptions;
DROP FUNCTION fulfilgate_subscriptions_written();
CREATE TRIGGER subscriptions_changed AFTER INSERT OR UPDATE OR DELETE ON subscriptions
    FOR EACH ROW EXECUTE FUNCTION fulfilgate_subscriptions_changed();
