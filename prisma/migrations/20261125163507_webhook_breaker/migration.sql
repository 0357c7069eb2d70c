-- AlterTable
ALTER TABLE "WebhookEndpoint" ADD COLUMN     "pausedUntil" TIMESTAMPTZ(3),
ADD COLUMN     "timeoutStreak" INTEGER NOT NULL DEFAULT 0;
