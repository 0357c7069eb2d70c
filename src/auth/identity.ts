// Who is calling: the identity the gate (src/http/gate.ts) decides once per request, before any
// resolver runs, from the API key the request presents.

export type Plan = 'BASIC' | 'PRO' | 'ENTERPRISE';

/** A request made with a valid (known, unrevoked, unexpired) API key. */
export interface KeyCaller {
  kind: 'key';
  ip: string;
  keyId: string;
  /** The owning account: "the caller's own orders" are this account's. */
  accountId: string;
  plan: Plan;
  scopes: string[];
  /** Enterprise keys: the key's own limit and window; null means the plan's default. */
  rateLimit: number | null;
  rateWindowSeconds: number | null;
}

/** Who is calling, decided once per request by src/auth before any resolver runs. */
export type Caller = { kind: 'anonymous'; ip: string } | KeyCaller;

/**
 * The caller's key, for code behind a field that declares scopes: the field's rules let only a key
 * through, so meeting anything else here is a field that forgot its scopes, not a client's mistake.
 */
export function keyCaller(caller: Caller): KeyCaller {
  if (caller.kind !== 'key') throw new Error('Reached without an API key: the field must declare its scopes');
  return caller;
}
