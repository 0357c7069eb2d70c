-- CreateTable
CREATE TABLE "CategoryProductCount" (
    "categoryId" TEXT NOT NULL,
    "activeProducts" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "CategoryProductCount_pkey" PRIMARY KEY ("categoryId")
);

-- CreateIndex
CREATE INDEX "Product_categoryId_isActive_viewCount_id_idx" ON "Product"("categoryId", "isActive", "viewCount" DESC, "id");

-- AddForeignKey
ALTER TABLE "CategoryProductCount" ADD CONSTRAINT "CategoryProductCount_categoryId_fkey" FOREIGN KEY ("categoryId") REFERENCES "Category"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Written by hand (Prisma does not model rows, functions or triggers).
-- "CategoryProductCount" holds each category's own active products, so that a category's
-- _count.products adds up a row per category of its subtree instead of counting every active
-- product in it (all of them, for the whole list: ~20 ms at 100,000 products, growing with the
-- catalogue). Statement triggers on "Product" keep it in the transaction of every change, made by
-- the service or by anything else; their names sort after "Product_log_*", so a statement that
-- changes a count has already locked the catalogue revision's row (advance_catalog_revision) and
-- such statements queue there, never on each other's count rows.

-- Adds each category's change of active products (`categories` and `deltas` side by side) to its
-- row, in category order, so two statements lock the rows they share in the same order.
CREATE FUNCTION "add_category_product_counts"(categories text[], deltas bigint[]) RETURNS void LANGUAGE sql AS $$
  INSERT INTO "CategoryProductCount" AS k ("categoryId", "activeProducts")
    SELECT c, d FROM unnest(categories, deltas) AS u(c, d) WHERE d <> 0 ORDER BY c
  ON CONFLICT ("categoryId") DO UPDATE SET "activeProducts" = k."activeProducts" + EXCLUDED."activeProducts"
$$;

CREATE FUNCTION "count_products_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "add_category_product_counts"(array_agg(c), array_agg(n))
    FROM (SELECT "categoryId" AS c, count(*) AS n FROM new_rows WHERE "isActive" GROUP BY "categoryId") AS s;
  RETURN NULL;
END
$$;

CREATE FUNCTION "count_products_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "add_category_product_counts"(array_agg(c), array_agg(-n))
    FROM (SELECT "categoryId" AS c, count(*) AS n FROM old_rows WHERE "isActive" GROUP BY "categoryId") AS s;
  RETURN NULL;
END
$$;

-- Runs for every UPDATE (no column list with transition tables): one that moves no product in or
-- out of a category's active ones (an order taking stock) nets to nothing and writes nothing.
CREATE FUNCTION "count_products_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "add_category_product_counts"(array_agg(c), array_agg(n))
    FROM (
      SELECT c, sum(d) AS n FROM (
        SELECT "categoryId" AS c, -1 AS d FROM old_rows WHERE "isActive"
        UNION ALL
        SELECT "categoryId", 1 FROM new_rows WHERE "isActive") AS moved
      GROUP BY c HAVING sum(d) <> 0) AS s;
  RETURN NULL;
END
$$;

CREATE FUNCTION "count_products_truncated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "CategoryProductCount";
  RETURN NULL;
END
$$;

CREATE TRIGGER "Product_tally_inserted" AFTER INSERT ON "Product"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "count_products_inserted"();
CREATE TRIGGER "Product_tally_deleted" AFTER DELETE ON "Product"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "count_products_deleted"();
CREATE TRIGGER "Product_tally_updated" AFTER UPDATE ON "Product"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "count_products_updated"();
CREATE TRIGGER "Product_tally_truncated" AFTER TRUNCATE ON "Product"
  FOR EACH STATEMENT EXECUTE FUNCTION "count_products_truncated"();

-- The counts as they are. Creating the triggers above locked "Product" against writes until this
-- migration commits, so no change slips between this count and the triggers.
INSERT INTO "CategoryProductCount" ("categoryId", "activeProducts")
  SELECT "categoryId", count(*) FROM "Product" WHERE "isActive" GROUP BY "categoryId";
