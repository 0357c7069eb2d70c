-- AlterTable
ALTER TABLE "WebhookEvent" ADD COLUMN     "traceparent" TEXT,
ADD COLUMN     "tracestate" TEXT;
