-- CreateTable
CREATE TABLE "FormClaim" (
    "tokenHash" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "createdId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "FormClaim_pkey" PRIMARY KEY ("tokenHash")
);

-- CreateIndex
CREATE INDEX "FormClaim_createdAt_idx" ON "FormClaim"("createdAt");
