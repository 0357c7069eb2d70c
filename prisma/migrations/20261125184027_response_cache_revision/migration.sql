-- CreateTable
CREATE TABLE "DataRevision" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "revision" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "DataRevision_pkey" PRIMARY KEY ("id")
);

-- Written by hand (Prisma does not model rows, functions or triggers).
-- The only row.
INSERT INTO "DataRevision" ("id", "revision") VALUES (1, 0);

-- Bumps the revision once per transaction, however many rows and tables it changes. The triggers
-- below are deferred to the commit: the revision's row is locked only while the transaction
-- commits, not while it works, so concurrent writers (two orders) barely wait on each other. The
-- bump commits with the change, so a reader that sees the new revision sees the change.
CREATE FUNCTION "bump_data_revision"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('marketplace.data_revision_bumped', true) IS DISTINCT FROM 'yes' THEN
    PERFORM set_config('marketplace.data_revision_bumped', 'yes', true);
    UPDATE "DataRevision" SET "revision" = "revision" + 1 WHERE "id" = 1;
  END IF;
  RETURN NULL;
END
$$;

-- Every table an API read shows (the catalogue, accounts and their keys, addresses, orders).
-- Written by any means: the service, psql, another application.
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['Category', 'Supplier', 'Product', 'Review', 'Favorite', 'Account', 'SupplierMember', 'Address', 'Order', 'OrderEvent', 'OrderItem', 'Coupon'] LOOP
    EXECUTE format('CREATE CONSTRAINT TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "bump_data_revision"()', t || '_data_revision', t);
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION "bump_data_revision"()', t || '_data_revision_truncate', t);
  END LOOP;
END
$$;

-- A key's settings show in /api/me and decide what it may read; its last use (written in batches
-- all day long) shows nowhere cached, so it does not bump the revision.
CREATE CONSTRAINT TRIGGER "ApiKey_data_revision" AFTER INSERT OR DELETE ON "ApiKey"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "bump_data_revision"();
CREATE CONSTRAINT TRIGGER "ApiKey_data_revision_settings"
  AFTER UPDATE OF "accountId", "name", "plan", "rateLimit", "rateWindowSeconds", "scopes", "expiresAt", "revokedAt" ON "ApiKey"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "bump_data_revision"();
CREATE TRIGGER "ApiKey_data_revision_truncate" AFTER TRUNCATE ON "ApiKey" FOR EACH STATEMENT EXECUTE FUNCTION "bump_data_revision"();
