-- CreateTable
CREATE TABLE "LiveStream" (
    "id" TEXT NOT NULL,
    "keyId" TEXT NOT NULL,
    "instance" TEXT NOT NULL,
    "openedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "leaseUntil" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "LiveStream_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "LiveStream_keyId_idx" ON "LiveStream"("keyId");

-- CreateIndex
CREATE INDEX "LiveStream_leaseUntil_idx" ON "LiveStream"("leaseUntil");
