-- CreateTable
CREATE TABLE "CatalogRevision" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "revision" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "CatalogRevision_pkey" PRIMARY KEY ("id")
);

-- Written by hand (Prisma does not model rows or triggers).
-- The only row. Without it totals are simply never cached (src/list-totals.ts).
INSERT INTO "CatalogRevision" ("id", "revision") VALUES (1, 0);

-- Statement-level: one bump per statement however many rows it touches. Only the columns a
-- product list filters on count (price, isActive, ...); order creation changes stock only, so
-- orders neither bump the revision nor queue behind this row's lock.
CREATE FUNCTION "bump_catalog_revision"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "CatalogRevision" SET "revision" = "revision" + 1 WHERE "id" = 1;
  RETURN NULL;
END
$$;

CREATE TRIGGER "Product_catalog_revision_rows"
  AFTER INSERT OR DELETE ON "Product"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_catalog_revision"();

CREATE TRIGGER "Product_catalog_revision_truncate"
  AFTER TRUNCATE ON "Product"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_catalog_revision"();

CREATE TRIGGER "Product_catalog_revision_listed_columns"
  AFTER UPDATE OF "isActive", "categoryId", "supplierId", "price", "isFeatured", "searchText" ON "Product"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_catalog_revision"();
