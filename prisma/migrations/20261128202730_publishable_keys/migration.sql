-- CreateEnum
CREATE TYPE "KeyKind" AS ENUM ('SECRET', 'PUBLISHABLE');

-- AlterTable
ALTER TABLE "ApiKey" ADD COLUMN     "allowServer" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "kind" "KeyKind" NOT NULL DEFAULT 'SECRET',
ADD COLUMN     "origins" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- A key's kind, origins and server use are read by the key check (src/auth/key-check.ts,
-- CHECKED_COLUMNS): a change to them must reach every instance's key cache as it commits.
DROP TRIGGER "ApiKey_changed" ON "ApiKey";
CREATE TRIGGER "ApiKey_changed" AFTER UPDATE ON "ApiKey" FOR EACH ROW
  WHEN ((OLD."id", OLD."hash", OLD."accountId", OLD."plan", OLD."scopes", OLD."rateLimit", OLD."rateWindowSeconds", OLD."expiresAt", OLD."revokedAt", OLD."kind", OLD."origins", OLD."allowServer")
        IS DISTINCT FROM
        (NEW."id", NEW."hash", NEW."accountId", NEW."plan", NEW."scopes", NEW."rateLimit", NEW."rateWindowSeconds", NEW."expiresAt", NEW."revokedAt", NEW."kind", NEW."origins", NEW."allowServer"))
  EXECUTE FUNCTION api_key_changed();
