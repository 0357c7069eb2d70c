-- Each instance keeps the keys it has checked in memory (src/auth/key-cache.ts) and LISTENs on
-- "api_key_changed". Any change to what authentication reads of a key, or the key's removal,
-- notifies the key's hash, delivered to every listener when the transaction commits; TRUNCATE
-- notifies '*' (forget every key). Last-use stamps (lastUsedAt) and the key's name are not read
-- by authentication, so they notify nothing: the last-use flush does not empty the caches.
CREATE FUNCTION api_key_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('api_key_changed', '*');
  ELSE
    PERFORM pg_notify('api_key_changed', OLD."hash");
    IF TG_OP = 'UPDATE' AND NEW."hash" IS DISTINCT FROM OLD."hash" THEN
      PERFORM pg_notify('api_key_changed', NEW."hash");
    END IF;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "ApiKey_changed" AFTER UPDATE ON "ApiKey" FOR EACH ROW
  WHEN ((OLD."id", OLD."hash", OLD."accountId", OLD."plan", OLD."scopes", OLD."rateLimit", OLD."rateWindowSeconds", OLD."expiresAt", OLD."revokedAt")
        IS DISTINCT FROM
        (NEW."id", NEW."hash", NEW."accountId", NEW."plan", NEW."scopes", NEW."rateLimit", NEW."rateWindowSeconds", NEW."expiresAt", NEW."revokedAt"))
  EXECUTE FUNCTION api_key_changed();
CREATE TRIGGER "ApiKey_deleted" AFTER DELETE ON "ApiKey" FOR EACH ROW EXECUTE FUNCTION api_key_changed();
CREATE TRIGGER "ApiKey_truncated" AFTER TRUNCATE ON "ApiKey" FOR EACH STATEMENT EXECUTE FUNCTION api_key_changed();
