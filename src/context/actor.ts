// Who is asking, for every face: the API's callers (anonymous, or a valid key's), a person signed
// in to the dashboard, the operator at the keys CLI, and the service itself (the webhook worker).
// The gate (src/pipeline/gate.ts) decides an API caller once per request, before any resolver runs.

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
  /** A publishable key's (`pk_`) rules; absent for a secret key. */
  publishable?: PublishableRules;
}

/** What a publishable key allows besides its catalogue scopes (src/auth/key-check.ts). */
export interface PublishableRules {
  /** The origins (normalised, scheme://host[:port]) whose pages may use it. */
  origins: string[];
  /** A request without an Origin (a server's, not a browser's) is accepted too. */
  allowServer: boolean;
}

/** Who calls the API (REST or GraphQL). */
export type Caller = { kind: 'anonymous'; ip: string } | KeyCaller;

/** The owner of an account, signed in to the dashboard: acts for the account with every right it has. */
export interface SessionActor {
  kind: 'session';
  accountId: string;
  ip: string;
  /** The session's id (never its token), for the account's security log. */
  sessionId?: string;
}

/** The operator at the keys CLI: acts for any account, as the one who runs the service. */
export interface OperatorActor {
  kind: 'operator';
}

/** The service itself, doing work nobody asked for in a request (the webhook worker). */
export interface SystemActor {
  kind: 'system';
  /** What part of the service acts, for the logs. */
  name: string;
}

export type Actor = Caller | SessionActor | OperatorActor | SystemActor;

/**
 * The caller's key, for code behind a field that declares scopes: the field's rules let only a key
 * through, so meeting anything else here is a field that forgot its scopes, not a client's mistake.
 */
export function keyCaller(actor: Actor): KeyCaller {
  if (actor.kind !== 'key') throw new Error('Reached without an API key: the field must declare its scopes');
  return actor;
}

/** The account an actor acts for, when it acts for one (a key's owner, a signed-in person). */
export function accountOf(actor: Actor): string | null {
  return actor.kind === 'key' || actor.kind === 'session' ? actor.accountId : null;
}
