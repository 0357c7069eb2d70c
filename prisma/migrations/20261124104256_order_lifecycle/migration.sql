-- CreateEnum
CREATE TYPE "OrderActor" AS ENUM ('BUYER', 'SUPPLIER');

-- DropIndex
DROP INDEX "Review_supplierId_idx";

-- DropIndex
DROP INDEX "Order_supplierId_idx";

-- AlterTable
ALTER TABLE "OrderItem" ADD COLUMN     "stockTaken" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "SupplierMember" (
    "accountId" TEXT NOT NULL,
    "supplierId" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SupplierMember_pkey" PRIMARY KEY ("accountId")
);

-- CreateTable
CREATE TABLE "OrderEvent" (
    "id" TEXT NOT NULL,
    "orderId" TEXT NOT NULL,
    "status" "OrderStatus" NOT NULL,
    "actor" "OrderActor" NOT NULL,
    "accountId" TEXT,
    "note" TEXT,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OrderEvent_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "SupplierMember_supplierId_idx" ON "SupplierMember"("supplierId");

-- CreateIndex
CREATE INDEX "OrderEvent_orderId_at_id_idx" ON "OrderEvent"("orderId", "at", "id");

-- CreateIndex
CREATE INDEX "OrderEvent_accountId_idx" ON "OrderEvent"("accountId");

-- CreateIndex
CREATE INDEX "Review_productId_rating_idx" ON "Review"("productId", "rating");

-- CreateIndex
CREATE INDEX "Review_supplierId_createdAt_id_idx" ON "Review"("supplierId", "createdAt" DESC, "id");

-- CreateIndex
CREATE INDEX "Review_supplierId_rating_idx" ON "Review"("supplierId", "rating");

-- CreateIndex
CREATE INDEX "Order_supplierId_createdAt_id_idx" ON "Order"("supplierId", "createdAt" DESC, "id");

-- CreateIndex
CREATE INDEX "Order_supplierId_status_createdAt_id_idx" ON "Order"("supplierId", "status", "createdAt" DESC, "id");

-- AddForeignKey
ALTER TABLE "SupplierMember" ADD CONSTRAINT "SupplierMember_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SupplierMember" ADD CONSTRAINT "SupplierMember_supplierId_fkey" FOREIGN KEY ("supplierId") REFERENCES "Supplier"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OrderEvent" ADD CONSTRAINT "OrderEvent_orderId_fkey" FOREIGN KEY ("orderId") REFERENCES "Order"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OrderEvent" ADD CONSTRAINT "OrderEvent_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- Orders placed before this migration: their stock was taken if the product tracked inventory
-- (no order could be cancelled yet), and their history starts with their placing. An order some
-- earlier tool moved on gets its present status as a second entry, at its last update.
UPDATE "OrderItem" AS i SET "stockTaken" = p."trackInventory" FROM "Product" AS p WHERE p.id = i."productId";

INSERT INTO "OrderEvent" (id, "orderId", status, actor, "accountId", note, at)
SELECT gen_random_uuid()::text, o.id, 'PENDING', 'BUYER', o."buyerId", NULL, o."createdAt" FROM "Order" AS o;

INSERT INTO "OrderEvent" (id, "orderId", status, actor, "accountId", note, at)
SELECT gen_random_uuid()::text, o.id, o.status, 'SUPPLIER', NULL, 'recorded before order history was kept', o."updatedAt"
FROM "Order" AS o WHERE o.status <> 'PENDING';
