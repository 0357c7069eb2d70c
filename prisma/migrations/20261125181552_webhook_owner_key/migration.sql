-- Endpoints registered before this migration cannot be told apart: they stay the account's (keyId null),
-- as if made in the dashboard. From now on an endpoint registered over the API is its key's.
-- AlterTable
ALTER TABLE "WebhookEndpoint" ADD COLUMN     "keyId" TEXT;

-- CreateIndex
CREATE INDEX "WebhookEndpoint_keyId_idx" ON "WebhookEndpoint"("keyId");

-- AddForeignKey
ALTER TABLE "WebhookEndpoint" ADD CONSTRAINT "WebhookEndpoint_keyId_fkey" FOREIGN KEY ("keyId") REFERENCES "ApiKey"("id") ON DELETE CASCADE ON UPDATE CASCADE;
