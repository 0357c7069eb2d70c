-- GraphQL subscriptions (src/domain/live/) hear changes through PostgreSQL: every instance LISTENs
-- on "live_changes", and these triggers notify it as a change commits, whoever made it (the API, the
-- dashboard, the CLI or plain SQL). A notification names what changed and nothing more (its kind,
-- its id, and for an order what happened): each subscriber then reads the row as its own caller,
-- with the same scopes and ownership as a query, so nothing reaches a stream that a query would not
-- show. The payload stays far below NOTIFY's 8000 bytes.
CREATE FUNCTION live_order_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('live_changes', json_build_object(
    'kind', 'order',
    'id', NEW."id",
    'type', CASE
      WHEN TG_OP = 'INSERT' THEN 'CREATED'
      WHEN NEW."status" = 'CANCELLED' THEN 'CANCELLED'
      ELSE 'STATUS_CHANGED'
    END)::text);
  RETURN NULL;
END
$$;

CREATE TRIGGER "Order_live_created" AFTER INSERT ON "Order" FOR EACH ROW EXECUTE FUNCTION live_order_changed();
CREATE TRIGGER "Order_live_status" AFTER UPDATE ON "Order" FOR EACH ROW
  WHEN (OLD."status" IS DISTINCT FROM NEW."status")
  EXECUTE FUNCTION live_order_changed();

-- A product's price, stock or active state: what productChanged tells.
CREATE FUNCTION live_product_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('live_changes', json_build_object('kind', 'product', 'id', NEW."id")::text);
  RETURN NULL;
END
$$;

CREATE TRIGGER "Product_live_changed" AFTER UPDATE ON "Product" FOR EACH ROW
  WHEN ((OLD."price", OLD."compareAtPrice", OLD."vatRate", OLD."stock", OLD."lowStockThreshold", OLD."trackInventory", OLD."isActive")
        IS DISTINCT FROM
        (NEW."price", NEW."compareAtPrice", NEW."vatRate", NEW."stock", NEW."lowStockThreshold", NEW."trackInventory", NEW."isActive"))
  EXECUTE FUNCTION live_product_changed();
