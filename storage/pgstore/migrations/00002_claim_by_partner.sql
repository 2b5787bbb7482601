-- Claims read the due deliveries of each partner in schedule order (so one
-- partner's backlog does not hide another's deliveries): an index on
-- (partner_id, pos) serves that, and what the index on partner_id alone
-- served.

-- +goose Up
CREATE INDEX deliveries_partner_pos ON deliveries (partner_id, pos);
DROP INDEX deliveries_partner;

-- +goose Down
CREATE INDEX deliveries_partner ON deliveries (partner_id);
DROP INDEX deliveries_partner_pos;
