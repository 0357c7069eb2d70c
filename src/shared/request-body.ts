import { AppError } from './errors.js';

// Reading request bodies without trusting the client about their size: used by every face that
// reads one (the REST adapter and /graphql share the same limit; the dashboard's forms take a smaller one).

/** Largest request body accepted (1 MiB): an order of 100 items or a large query is a few kilobytes. */
export const MAX_BODY_BYTES = 1024 * 1024;

export const payloadTooLarge = (limit = MAX_BODY_BYTES) =>
  new AppError('PAYLOAD_TOO_LARGE', `The request body must be at most ${limit} bytes`);

/**
 * The body's bytes, refusing to buffer more than `limit` whatever Content-Length claims: a
 * declared length over the limit is refused before a byte is read, and a body without one
 * (chunked) is counted while it arrives and abandoned as soon as it passes the limit.
 * Throws AppError PAYLOAD_TOO_LARGE. The caller should close the connection after answering,
 * since the rest of the body is never read.
 */
export async function readLimited(request: Request, limit = MAX_BODY_BYTES): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) throw payloadTooLarge(limit);
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw payloadTooLarge(limit);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
