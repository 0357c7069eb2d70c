import crypto from 'node:crypto';
import type { CursorSeal, CursorSealSource } from '../context/context.js';
import type { PrismaClient } from '../db/prisma.js';

// The cursors a connection hands out are plugin-prisma's own (base64 of `GPC:S:<id>`) with an
// HMAC-SHA256 tag: `<the raw cursor's bytes, base64url>.<tag, base64url>`. Only a cursor this
// service signed pages on, so a client cannot name a row of its choosing (one that does not exist
// ends its pagination silently; an inactive one would page on, confirming that it exists).
//
// Several secrets verify and the first signs, so a new secret can be put in front while cursors
// already handed out under the old one keep working until it is dropped.

/** 128 bits: a forgery is a guess per request against a 2^-128 chance. */
const TAG_BYTES = 16;
const TAG_LENGTH = Math.ceil((TAG_BYTES * 4) / 3);
/** Far above any cursor issued here (ids are short): a longer one is refused before any hashing. */
const MAX_SEALED_LENGTH = 512;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The name of the generated secret in "ServerSecret", used while CURSOR_SECRETS is unset. */
const STORED_SECRET_NAME = 'cursor';

export function createCursorSeal(secrets: readonly string[]): CursorSeal {
  if (!secrets.length) throw new Error('A cursor seal needs at least one secret');
  const tagOf = (secret: string, raw: string) => crypto.createHmac('sha256', secret).update(raw).digest().subarray(0, TAG_BYTES);
  const [signing] = secrets as [string, ...string[]];
  return {
    sign(raw) {
      // The raw cursor is base64 already: carried as its bytes, the sealed one is hardly longer.
      return `${Buffer.from(raw, 'base64').toString('base64url')}.${tagOf(signing, raw).toString('base64url')}`;
    },
    open(sealed) {
      if (sealed.length > MAX_SEALED_LENGTH) return undefined;
      const dot = sealed.indexOf('.');
      const body = sealed.slice(0, dot);
      const tagText = sealed.slice(dot + 1);
      if (dot < 1 || tagText.length !== TAG_LENGTH || !BASE64URL.test(body) || !BASE64URL.test(tagText)) return undefined;
      const bytes = Buffer.from(body, 'base64url');
      const tag = Buffer.from(tagText, 'base64url');
      // One spelling per cursor: base64url decoding ignores stray bits, which would let one
      // signed cursor be written several ways.
      if (bytes.toString('base64url') !== body || tag.toString('base64url') !== tagText) return undefined;
      const raw = bytes.toString('base64');
      return secrets.some((secret) => crypto.timingSafeEqual(tagOf(secret, raw), tag)) ? raw : undefined;
    },
  };
}

/**
 * The seal of the configured secrets, or else of the one kept in the database. That one is read
 * on first need, not at start: the app starts, and answers what needs no cursor, while the
 * database is away; a failed read is tried again by the next request that needs it.
 */
export function cursorSealSource(configured: readonly string[] | undefined, prisma: PrismaClient): CursorSealSource {
  if (configured?.length) {
    const seal = createCursorSeal(configured);
    return () => seal;
  }
  let seal: CursorSeal | undefined;
  let reading: Promise<CursorSeal> | undefined;
  return () => {
    if (seal) return seal;
    if (!reading) {
      reading = storedSecret(prisma).then(
        (secret) => (seal = createCursorSeal([secret])),
        (error: unknown) => {
          reading = undefined;
          throw error;
        },
      );
      // Whoever needs the seal awaits this and hears the failure; a caller that only peeks need not.
      reading.catch(() => undefined);
    }
    return reading;
  };
}

/**
 * The generated secret: made once, on first use by any instance. Inserted only if absent, so
 * instances starting together all read the row that won. Never logged.
 */
async function storedSecret(prisma: PrismaClient): Promise<string> {
  const where = { name: STORED_SECRET_NAME };
  const found = await prisma.serverSecret.findUnique({ where, select: { value: true } });
  if (found) return found.value;
  await prisma.serverSecret.createMany({ data: [{ ...where, value: crypto.randomBytes(32).toString('base64url') }], skipDuplicates: true });
  return (await prisma.serverSecret.findUniqueOrThrow({ where, select: { value: true } })).value;
}
