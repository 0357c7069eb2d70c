-- Each live_changes notification names its transaction ('tx'): with REDIS_URL set, the instances
-- that hear it republish it on Redis (src/background/live-relay.ts), so one instance can receive a
-- change both ways, and the payload as a whole is what tells the second copy from a new change
-- (another transaction's change of the same row has another 'tx'). Within one transaction equal
-- payloads are still folded into one by NOTIFY itself, as before. Otherwise as in *_live_changes.
CREATE OR REPLACE FUNCTION live_order_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('live_changes', json_build_object(
    'kind', 'order',
    'id', NEW."id",
    'type', CASE
      WHEN TG_OP = 'INSERT' THEN 'CREATED'
      WHEN NEW."status" = 'CANCELLED' THEN 'CANCELLED'
      ELSE 'STATUS_CHANGED'
    END,
    'tx', pg_current_xact_id()::text)::text);
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION live_product_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('live_changes', json_build_object('kind', 'product', 'id', NEW."id", 'tx', pg_current_xact_id()::text)::text);
  RETURN NULL;
END
$$;
