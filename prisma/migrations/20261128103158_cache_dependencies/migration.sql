-- AlterTable
ALTER TABLE "DataRevision" ADD COLUMN     "changesFrom" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "CacheChange" (
    "revision" BIGINT NOT NULL,
    "tag" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CacheChange_pkey" PRIMARY KEY ("revision","tag")
);

-- Written by hand (Prisma does not model functions or triggers).
--
-- The response cache's dependencies (src/cache/dependencies.ts). One data revision for every
-- table made every kept answer stale at every write: an order (which takes stock) emptied the
-- cache of every instance. Now a transaction that really changes a row still bumps the revision
-- once, and also records, under that revision, the tags its rows changed; a kept answer stays
-- valid while none of the tags it read changed after the revision it was made at.
--
-- Tags, and why these:
--   "Product"            a product added, removed, or changed in anything but its stock: lists
--                        filter and sort on most columns, so any answer that shows products depends on it.
--   "Product:<id>"       that product's stock (an order, a cancellation, a stock write): only the
--                        answers that show that product. "Product:*" goes with it, for an answer that
--                        shows products without their ids (a GraphQL query that did not select `id`).
--   "Category", "Supplier", "Review", "Coupon"   the table: written rarely, read everywhere.
--   "account:<id>"       an account's private view (its profile, keys, addresses, favourites, orders
--                        as buyer or as a member of the order's supplier): never another account's.
--   "key:<id>"           a key's settings: the gate's kept key is checked against it on every request.
--   "*"                  a TRUNCATE: everything.
-- A write that changes nothing (an UPDATE whose new row equals the old one, bar updatedAt or a
-- key's lastUsedAt) records nothing and bumps nothing.

DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['Category', 'Supplier', 'Product', 'Review', 'Favorite', 'Account', 'SupplierMember', 'Address', 'Order', 'OrderEvent', 'OrderItem', 'Coupon'] LOOP
    EXECUTE format('DROP TRIGGER %I ON %I', t || '_data_revision', t);
    EXECUTE format('DROP TRIGGER %I ON %I', t || '_data_revision_truncate', t);
  END LOOP;
END
$$;
DROP TRIGGER "ApiKey_data_revision" ON "ApiKey";
DROP TRIGGER "ApiKey_data_revision_settings" ON "ApiKey";
DROP TRIGGER "ApiKey_data_revision_truncate" ON "ApiKey";
DROP FUNCTION "bump_data_revision"();

-- The accounts whose private views show an order of `supplier` bought by `buyer`: the buyer and
-- the supplier's members.
CREATE FUNCTION "cache_order_viewers"(buyer text, supplier text) RETURNS text[] LANGUAGE sql STABLE AS $$
  SELECT array_agg(DISTINCT 'account:' || a) FROM (
    SELECT buyer AS a WHERE buyer IS NOT NULL
    UNION ALL
    SELECT m."accountId" FROM "SupplierMember" m WHERE m."supplierId" = supplier
  ) v
$$;

-- Records `tags` as changed by this transaction, bumping the revision on its first call.
CREATE FUNCTION "cache_record"(tags text[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  rev bigint;
  seen text := current_setting('marketplace.cache_revision', true);
BEGIN
  IF tags IS NULL OR cardinality(tags) = 0 THEN
    RETURN;
  END IF;
  IF seen IS NULL OR seen = '' THEN
    UPDATE "DataRevision" SET "revision" = "revision" + 1 WHERE "id" = 1 RETURNING "revision" INTO rev;
    PERFORM set_config('marketplace.cache_revision', rev::text, true);
  ELSE
    rev := seen::bigint;
  END IF;
  INSERT INTO "CacheChange" ("revision", "tag") SELECT rev, tag FROM unnest(tags) AS tag WHERE tag IS NOT NULL ON CONFLICT DO NOTHING;
END
$$;

-- Deferred to the commit, as before: the revision's row is locked only while the transaction
-- commits, so concurrent writers barely wait on each other, and the tags commit with the change.
CREATE FUNCTION "cache_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  o jsonb := CASE WHEN TG_OP IN ('UPDATE', 'DELETE') THEN to_jsonb(OLD) END;
  n jsonb := CASE WHEN TG_OP IN ('UPDATE', 'INSERT') THEN to_jsonb(NEW) END;
  r jsonb := coalesce(n, o);
  tags text[];
  parent record;
BEGIN
  -- Stamps that no cached answer depends on alone.
  IF TG_OP = 'UPDATE' AND (o - 'updatedAt' - 'lastUsedAt') = (n - 'updatedAt' - 'lastUsedAt') THEN
    RETURN NULL;
  END IF;
  CASE TG_TABLE_NAME
    WHEN 'Product' THEN
      IF TG_OP = 'UPDATE' AND (o - 'stock' - 'updatedAt') = (n - 'stock' - 'updatedAt') THEN
        tags := ARRAY['Product:' || (r->>'id'), 'Product:*'];
      ELSE
        tags := ARRAY['Product'];
      END IF;
    WHEN 'Favorite' THEN
      -- A product's favourites are counted in its answers.
      tags := ARRAY['Product:' || (r->>'productId'), 'Product:*', 'account:' || (r->>'accountId'), 'account:' || (o->>'accountId')];
    WHEN 'Account' THEN
      -- Its owner's views, and those of the suppliers it bought from (their orders show the buyer).
      tags := ARRAY['account:' || (r->>'id')] || (
        SELECT coalesce(array_agg(DISTINCT 'account:' || m."accountId"), '{}') FROM "Order" x JOIN "SupplierMember" m ON m."supplierId" = x."supplierId" WHERE x."buyerId" = r->>'id'
      );
    WHEN 'ApiKey' THEN
      tags := ARRAY['key:' || (r->>'id'), 'account:' || (r->>'accountId'), 'account:' || (o->>'accountId')];
    WHEN 'Address', 'SupplierMember' THEN
      tags := ARRAY['account:' || (r->>'accountId'), 'account:' || (o->>'accountId')];
    WHEN 'Order' THEN
      tags := "cache_order_viewers"(n->>'buyerId', n->>'supplierId') || "cache_order_viewers"(o->>'buyerId', o->>'supplierId');
      -- Its items and history written in the same transaction have nobody else to tell.
      PERFORM set_config('marketplace.cache_orders', coalesce(current_setting('marketplace.cache_orders', true), '') || ' ' || (r->>'id') || ' ', true);
    WHEN 'OrderItem', 'OrderEvent' THEN
      IF position(' ' || (r->>'orderId') || ' ' IN coalesce(current_setting('marketplace.cache_orders', true), '')) > 0 THEN
        RETURN NULL;
      END IF;
      SELECT x."buyerId", x."supplierId" INTO parent FROM "Order" x WHERE x."id" = r->>'orderId';
      -- Gone with its order (a cascade): the order's own trigger tells its viewers.
      IF FOUND THEN
        tags := "cache_order_viewers"(parent."buyerId", parent."supplierId");
      END IF;
    ELSE
      tags := ARRAY[TG_TABLE_NAME::text];
  END CASE;
  PERFORM "cache_record"(tags);
  RETURN NULL;
END
$$;

-- What each request reads (src/cache/freshness.ts): the revision, and the changes after `since`
-- (null: not asked for, since < 0, or pruned past it). A function, so that its plans are kept
-- for the session: the same statement sent as text was planned on every read, 2-3× its cost.
CREATE FUNCTION "cache_read"(since bigint) RETURNS TABLE ("revision" float8, "changesFrom" float8, "changes" json) LANGUAGE plpgsql STABLE AS $$
DECLARE
  d record;
BEGIN
  SELECT x."revision", x."changesFrom" INTO d FROM "DataRevision" x WHERE x."id" = 1;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  "revision" := d."revision";
  "changesFrom" := d."changesFrom";
  IF since < 0 OR since < d."changesFrom" THEN
    "changes" := NULL;
  ELSIF d."revision" <= since THEN
    "changes" := '[]';
  ELSE
    SELECT coalesce(json_agg(json_build_array(c."revision", c."tag")), '[]') INTO "changes"
    FROM "CacheChange" c WHERE c."revision" > since AND c."revision" <= d."revision";
  END IF;
  RETURN NEXT;
END
$$;

CREATE FUNCTION "cache_truncated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "cache_record"(ARRAY['*']);
  RETURN NULL;
END
$$;

DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['Category', 'Supplier', 'Product', 'Review', 'Favorite', 'Account', 'SupplierMember', 'Address', 'Order', 'OrderEvent', 'OrderItem', 'Coupon', 'ApiKey'] LOOP
    EXECUTE format('CREATE CONSTRAINT TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "cache_changed"()', t || '_cache_changed', t);
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION "cache_truncated"()', t || '_cache_truncated', t);
  END LOOP;
END
$$;
