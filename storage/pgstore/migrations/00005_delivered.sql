-- Recently delivered deliveries, for the partners' delivery log: the latest
-- of each subscription (the gateway trims the older ones). pos is the
-- schedule position of the delivery time (8 bytes of big-endian Unix
-- nanoseconds, then the delivery id); record is the delivery with its
-- attempt log.

-- +goose Up
CREATE TABLE delivered (
    subscription_id text NOT NULL,
    pos             bytea NOT NULL,
    id              text NOT NULL,
    partner_id      text NOT NULL,
    record          bytea NOT NULL,
    PRIMARY KEY (subscription_id, pos)
);

-- +goose Down
DROP TABLE delivered;
