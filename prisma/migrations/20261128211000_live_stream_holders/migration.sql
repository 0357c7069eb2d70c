-- Places of open streams are counted per holder: a secret key, or one visitor (client address) of
-- a publishable key, so that a storefront's visitors do not share one key's few places.
ALTER TABLE "LiveStream" ADD COLUMN "holder" TEXT NOT NULL DEFAULT '';
UPDATE "LiveStream" SET "holder" = "keyId";
ALTER TABLE "LiveStream" ALTER COLUMN "holder" DROP DEFAULT;

-- DropIndex
DROP INDEX "LiveStream_keyId_idx";

-- CreateIndex
CREATE INDEX "LiveStream_holder_idx" ON "LiveStream"("holder");
