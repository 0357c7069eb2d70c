// Password hashing and the rules a new password must meet.
//
// Passwords are hashed with argon2id and stored as PHC strings
// (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`), so every hash carries the parameters it was made
// with and old hashes keep verifying after the parameters change (signIn rehashes them then).
//
// The binding is @node-rs/argon2 (Rust, prebuilt per platform as an optional dependency, no
// install script): the `argon2` package's prebuilt binary needs Node-API 10, and Node 20 (9)
// crashes loading it.

import { hash, parseOptions, verify, type Algorithm } from '@node-rs/argon2';

/** @node-rs/argon2's Algorithm.Argon2id (a const enum, which isolated modules cannot read). */
const ARGON2ID = 2 as Algorithm;

/**
 * OWASP's recommended argon2id parameters (Password Storage Cheat Sheet): 19 MiB of memory,
 * 2 passes, 1 lane. About 30–40 ms per hash or verification on one core, on the libuv pool.
 */
export const ARGON2_PARAMS = Object.freeze({ algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 });

export const PASSWORD_MIN = 10;
/** Characters (code points); bounds the work one sign-in attempt can make the server do. */
export const PASSWORD_MAX = 256;

/**
 * One form of each password: NFC, so the same password typed on systems that compose accents
 * differently (é as one code point or as e + ´) is the same password.
 */
const canonical = (password: string) => password.normalize('NFC');
const length = (password: string) => [...password].length;

export function hashPassword(password: string): Promise<string> {
  return hash(canonical(password), ARGON2_PARAMS);
}

/**
 * Whether `password` matches the PHC string `hash`. Never throws: a malformed or foreign hash,
 * or a password longer than any we accept, is simply not a match.
 */
export async function verifyPassword(hashed: string, password: string): Promise<boolean> {
  if (length(password) > PASSWORD_MAX) return false;
  try {
    return await verify(hashed, canonical(password));
  } catch {
    return false;
  }
}

/** True when `hash` was made with other parameters than ARGON2_PARAMS (or is not argon2 at all). */
export function hashIsOutdated(hashed: string): boolean {
  try {
    const made = parseOptions(hashed);
    return (
      made.algorithm !== ARGON2_PARAMS.algorithm ||
      made.memoryCost !== ARGON2_PARAMS.memoryCost ||
      made.timeCost !== ARGON2_PARAMS.timeCost ||
      made.parallelism !== ARGON2_PARAMS.parallelism
    );
  } catch {
    return true;
  }
}

let dummyHash: Promise<string> | undefined;

/**
 * Spends one verification on nothing, for an unknown e-mail or an account without a password,
 * so those take as long as a wrong password and the timing does not tell which accounts exist.
 * Always false.
 */
export async function verifyNothing(password: string): Promise<false> {
  // Made once, with the current parameters, so it costs what a real stored hash costs.
  dummyHash ??= hashPassword('not a password: only here to spend the time of one verification');
  await verifyPassword(await dummyHash, password);
  return false;
}

let commonPasswords: Promise<ReadonlySet<string>> | undefined;

/** zxcvbn's 49k most common passwords, lower-cased; loaded on first use (a few MB), then kept. */
function loadCommonPasswords(): Promise<ReadonlySet<string>> {
  commonPasswords ??= import('@zxcvbn-ts/language-common').then(
    ({ dictionary }) => new Set(dictionary['passwords-common'].map((p) => p.toLowerCase())),
  );
  return commonPasswords;
}

/**
 * What is wrong with `password` as a new password for the account with `email`, as a message for
 * its owner (it never repeats the password), or null when it is acceptable.
 */
export async function passwordProblem(password: string, { email }: { email: string }): Promise<string | null> {
  const chars = length(password);
  if (chars < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters long`;
  if (chars > PASSWORD_MAX) return `must be at most ${PASSWORD_MAX} characters long (longer ones make every sign-in slow to check)`;
  const lower = canonical(password).toLowerCase();
  const address = email.trim().toLowerCase();
  const localPart = address.slice(0, address.lastIndexOf('@'));
  if (lower === address || (localPart !== '' && lower === localPart)) return 'must not be your e-mail address';
  if ((await loadCommonPasswords()).has(lower)) return 'is one of the most common passwords, which are tried first; choose another';
  return null;
}
