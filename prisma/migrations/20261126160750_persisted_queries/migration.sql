-- CreateTable
CREATE TABLE "PersistedQuery" (
    "hash" TEXT NOT NULL,
    "document" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "usedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PersistedQuery_pkey" PRIMARY KEY ("hash")
);

-- CreateIndex
CREATE INDEX "PersistedQuery_usedAt_idx" ON "PersistedQuery"("usedAt");
