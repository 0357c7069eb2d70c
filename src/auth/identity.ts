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
