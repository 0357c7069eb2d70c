import { AppError } from '../shared/errors.js';

/**
 * The API key a request presents (docs/api.md, Authentication): `X-API-Key: K` or
 * `Authorization: Bearer K`. Returns null when no key is presented (an Authorization header of
 * another scheme is not a key).
 *
 * Every presented key counts, however it arrives: repeated headers, and values joined with
 * commas (how a proxy or the Fetch API combines repeated headers; a key never contains a comma).
 * `rawHeaders` is Node's list of header lines: its parsed headers keep only the first
 * Authorization and drop the rest, so without the raw lines a second key would go unseen.
 * Keys that disagree are refused rather than one silently preferred; one key repeated is fine.
 */
export function presentedKey(headers: Headers, rawHeaders?: readonly string[]): string | null {
  const keys = [
    ...elements(headers, rawHeaders, 'x-api-key'),
    ...elements(headers, rawHeaders, 'authorization').flatMap((credential) => {
      const bearer = /^bearer(?:\s+(.*))?$/i.exec(credential);
      return bearer ? [(bearer[1] ?? '').trim()] : [];
    }),
  ];
  if (keys.length === 0) return null;
  if (keys.some((key) => key !== keys[0])) throw conflictingCredentials();
  // An empty header is a key that cannot be valid, not "no key": never fall back to anonymous.
  if (keys[0] === '') throw invalidKey();
  return keys[0]!;
}

/** The comma-separated elements of every `name` header the request carries, trimmed. */
function elements(headers: Headers, rawHeaders: readonly string[] | undefined, name: string): string[] {
  const values: string[] = [];
  if (rawHeaders) {
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name) values.push(rawHeaders[i + 1]!);
  } else {
    const value = headers.get(name);
    if (value !== null) values.push(value);
  }
  return values.flatMap((value) => value.split(',')).map((element) => element.trim());
}

export const invalidKey = () => new AppError('UNAUTHORIZED', 'Invalid API key: unknown, revoked or expired');

const conflictingCredentials = () =>
  new AppError('UNAUTHORIZED', 'Conflicting credentials: the request presents different API keys (X-API-Key, Authorization: Bearer); send one key');
