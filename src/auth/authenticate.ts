import { AppError } from '../errors.js';

/**
 * The API key a request presents, per docs/api.md (Authentication): `X-API-Key: K` or `Authorization: Bearer K`.
 * Returns null when no key is presented (an Authorization header of another scheme is not a
 * key). Two different keys in one request are refused rather than one silently preferred.
 */
export function presentedKey(headers: Headers): string | null {
  const apiKeyHeader = headers.get('x-api-key');
  const authorization = headers.get('authorization');
  const bearer = authorization && /^bearer(\s|$)/i.test(authorization.trim()) ? authorization.trim().slice(6).trim() : null;
  const apiKey = apiKeyHeader === null ? null : apiKeyHeader.trim();
  if (apiKey !== null && bearer !== null && apiKey !== bearer) {
    throw new AppError('UNAUTHORIZED', 'Conflicting credentials: X-API-Key and Authorization: Bearer carry different keys');
  }
  const key = apiKey ?? bearer;
  // An empty header is a key that cannot be valid, not "no key": never fall back to anonymous.
  if (key === '') throw invalidKey();
  return key;
}

export const invalidKey = () => new AppError('UNAUTHORIZED', 'Invalid API key: unknown, revoked or expired');
