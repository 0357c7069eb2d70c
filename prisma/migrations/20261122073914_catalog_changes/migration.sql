-- AlterTable
ALTER TABLE "CatalogRevision" ADD COLUMN     "changesFrom" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "epoch" UUID NOT NULL DEFAULT gen_random_uuid();

-- CreateTable
CREATE TABLE "CatalogChange" (
    "id" BIGSERIAL NOT NULL,
    "revision" BIGINT NOT NULL,
    "sign" SMALLINT NOT NULL,
    "isActive" BOOLEAN NOT NULL,
    "categoryId" TEXT NOT NULL,
    "supplierId" TEXT NOT NULL,
    "price" DECIMAL(12,2) NOT NULL,
    "isFeatured" BOOLEAN NOT NULL,
    "searchText" TEXT NOT NULL,

    CONSTRAINT "CatalogChange_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ListTotal" (
    "key" TEXT NOT NULL,
    "epoch" UUID NOT NULL,
    "revision" BIGINT NOT NULL,
    "total" INTEGER NOT NULL,
    "savedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ListTotal_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "CatalogChange_revision_idx" ON "CatalogChange"("revision");

-- CreateIndex
CREATE INDEX "ListTotal_savedAt_idx" ON "ListTotal"("savedAt");

-- Written by hand (Prisma does not model rows, functions or triggers).
-- No change before now is logged: totals kept so far are counted again once.
UPDATE "CatalogRevision" SET "changesFrom" = "revision";

-- The triggers of *_catalog_revision only bumped the revision; these also log what changed, so a
-- total kept at an older revision is carried to the current one by adding the logged changes
-- that match its filter, instead of counting every matching product again (src/list-totals.ts).
DROP TRIGGER "Product_catalog_revision_rows" ON "Product";
DROP TRIGGER "Product_catalog_revision_listed_columns" ON "Product";
DROP TRIGGER "Product_catalog_revision_truncate" ON "Product";
DROP FUNCTION "bump_catalog_revision"();

-- Bumps the revision for a statement that changed `changed` list entries (NULL: unknown) and
-- returns the revision to log them under, or NULL when they are not logged: the row is missing
-- (totals are not kept then), or the statement is too large to log, when every kept total is
-- counted again instead (cheaper than adding up so many changes). Keeps the changes of the last
-- 1,000 revisions.
CREATE FUNCTION "advance_catalog_revision"(changed bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  bumped bigint;
  logged_from bigint;
BEGIN
  UPDATE "CatalogRevision" SET "revision" = "revision" + 1 WHERE "id" = 1
    RETURNING "revision", "changesFrom" INTO bumped, logged_from;
  IF bumped IS NULL THEN
    RETURN NULL;
  END IF;
  IF changed IS NULL OR changed > 1000 THEN
    UPDATE "CatalogRevision" SET "changesFrom" = bumped WHERE "id" = 1;
    DELETE FROM "CatalogChange";
    DELETE FROM "ListTotal";
    RETURN NULL;
  END IF;
  IF bumped - 1000 > logged_from THEN
    UPDATE "CatalogRevision" SET "changesFrom" = bumped - 1000 WHERE "id" = 1;
    DELETE FROM "CatalogChange" WHERE "revision" <= bumped - 1000;
    DELETE FROM "ListTotal" WHERE "revision" < bumped - 1000;
  END IF;
  RETURN bumped;
END
$$;

CREATE FUNCTION "log_products_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  logged_at bigint := "advance_catalog_revision"((SELECT count(*) FROM new_rows));
BEGIN
  INSERT INTO "CatalogChange" ("revision", "sign", "isActive", "categoryId", "supplierId", "price", "isFeatured", "searchText")
    SELECT logged_at, 1, "isActive", "categoryId", "supplierId", "price", "isFeatured", "searchText"
    FROM new_rows WHERE logged_at IS NOT NULL;
  RETURN NULL;
END
$$;

CREATE FUNCTION "log_products_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  logged_at bigint := "advance_catalog_revision"((SELECT count(*) FROM old_rows));
BEGIN
  INSERT INTO "CatalogChange" ("revision", "sign", "isActive", "categoryId", "supplierId", "price", "isFeatured", "searchText")
    SELECT logged_at, -1, "isActive", "categoryId", "supplierId", "price", "isFeatured", "searchText"
    FROM old_rows WHERE logged_at IS NOT NULL;
  RETURN NULL;
END
$$;

-- PostgreSQL allows no column list on a trigger with transition tables, so this runs for every
-- UPDATE; one that changes no listed column (an order taking stock) returns before touching the
-- revision row, so orders never queue on its lock.
CREATE FUNCTION "log_products_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed bigint;
  logged_at bigint;
BEGIN
  SELECT count(*) INTO changed FROM (
    SELECT "id", "isActive", "categoryId", "supplierId", "price", "isFeatured", "searchText" FROM old_rows
    EXCEPT ALL
    SELECT "id", "isActive", "categoryId", "supplierId", "price", "isFeatured", "searchText" FROM new_rows) AS gone;
  IF changed = 0 THEN
    RETURN NULL;
  END IF;
  logged_at := "advance_catalog_revision"(2 * changed);
  IF logged_at IS NULL THEN
    RETURN NULL;
  END IF;
  INSERT INTO "CatalogChange" ("revision", "sign", "isActive", "categoryId", "supplierId", "price", "isFeatured", "searchText")
    SELECT logged_at, -1, "isActive", "categoryId", "supplierId", "price", "isFeatured", "searchText" FROM (
      SELECT "id", "isActive", "categoryId", "supplierId", "price", "isFeatured", "searchText" FROM old_rows
      EXCEPT ALL
      SELECT "id", "isActive", "categoryId", "supplierId", "price", "isFeatured", "searchText" FROM new_rows) AS gone
    UNION ALL
    SELECT logged_at, 1, "isActive", "categoryId", "supplierId", "price", "isFeatured", "searchText" FROM (
      SELECT "id", "isActive", "categoryId", "supplierId", "price", "isFeatured", "searchText" FROM new_rows
      EXCEPT ALL
      SELECT "id", "isActive", "categoryId", "supplierId", "price", "isFeatured", "searchText" FROM old_rows) AS came;
  RETURN NULL;
END
$$;

-- TRUNCATE has no rows to log: every kept total is counted again.
CREATE FUNCTION "log_products_truncated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "advance_catalog_revision"(NULL);
  RETURN NULL;
END
$$;

CREATE TRIGGER "Product_log_inserted" AFTER INSERT ON "Product"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "log_products_inserted"();
CREATE TRIGGER "Product_log_deleted" AFTER DELETE ON "Product"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "log_products_deleted"();
CREATE TRIGGER "Product_log_updated" AFTER UPDATE ON "Product"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "log_products_updated"();
CREATE TRIGGER "Product_log_truncated" AFTER TRUNCATE ON "Product"
  FOR EACH STATEMENT EXECUTE FUNCTION "log_products_truncated"();

-- A row inserted (restored from a backup, or put back by hand) starts a new lineage: its revision
-- numbers say nothing about totals kept before, and changes logged before do not apply to it.
CREATE FUNCTION "start_catalog_lineage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."epoch" := gen_random_uuid();
  NEW."changesFrom" := NEW."revision";
  DELETE FROM "CatalogChange";
  DELETE FROM "ListTotal";
  RETURN NEW;
END
$$;

CREATE TRIGGER "CatalogRevision_new_lineage" BEFORE INSERT ON "CatalogRevision"
  FOR EACH ROW EXECUTE FUNCTION "start_catalog_lineage"();
