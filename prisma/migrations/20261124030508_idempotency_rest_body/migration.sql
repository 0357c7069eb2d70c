-- AlterTable
ALTER TABLE "IdempotencyRecord" ADD COLUMN     "restBody" TEXT;
