import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { memberSupplierId } from '../../auth/membership.js';
import { hasScope } from '../../auth/scopes.js';
import type { Actor } from '../../context/actor.js';
import { inTransaction, type CreationStep, type RequestContext } from '../../context/context.js';
import { endpointDetails, recordByContext } from '../../accounts/security-log.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { AppError, validationError } from '../../shared/errors.js';
import { pageParams, pageWindow, type PageInput } from '../../shared/pagination.js';
import { declareRule, enumParam, HTTP_URL_RULE, idParam, withoutControlChars } from '../../shared/validation.js';
import { MAX_ENDPOINTS, TEST_EVENT, WEBHOOK_EVENT_NAMES, WEBHOOK_EVENTS, type WebhookEventName } from './events.js';
import { testEventData, writeEvent } from './outbox.js';
import { MAX_URL_LENGTH, targetProblem } from './targets.js';

// An account's webhook endpoints. An endpoint registered over the API belongs to the key that
// registered it (write:webhooks): that key alone manages it, it hears only what the key may read,
// and it stops when the key is revoked or expires. One made in the dashboard by the signed-in owner
// belongs to the account. The owner sees and manages all of the account's, at most MAX_ENDPOINTS.
// Another account's endpoint, or for a key another key's, is as absent as one that never existed.
export const MAX_DESCRIPTION = 500;
const INVALID = 'Invalid webhook endpoint';

export const endpointInput = z
  .object({
    // targetProblem's rules a document can state; https-only in production and public addresses it cannot.
    url: declareRule(z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`), HTTP_URL_RULE),
    events: z
      .array(enumParam(WEBHOOK_EVENT_NAMES), { error: `must be an array of event types (${WEBHOOK_EVENT_NAMES.join(', ')})` })
      .min(1, 'must name at least one event type')
      .transform((names) => [...new Set(names)]),
    description: withoutControlChars(z.string({ error: 'must be a string' }).max(MAX_DESCRIPTION, `must be at most ${MAX_DESCRIPTION} characters`))
      .transform((v) => v.trim() || null)
      .nullable()
      .optional(),
  })
  .strict();
export type EndpointInput = z.output<typeof endpointInput>;

/** createWebhookEndpoint's rule for its `input` argument, which is also the REST body. */
export const endpointRule = { schema: endpointInput, argument: 'input', message: INVALID, unknownKey: 'is not a recognised field' };

export const deliveryListInput = z
  .object({ id: idParam, ...pageParams, status: enumParam(['PENDING', 'DELIVERED', 'FAILED'] as const).optional() })
  .strict();

/** The key behind an endpoint, as its state needs it. */
const ownerKeySelect = { id: true, name: true, prefix: true, revokedAt: true, expiresAt: true } satisfies Prisma.ApiKeySelect;

const endpointSelect = {
  id: true,
  url: true,
  events: true,
  description: true,
  disabledAt: true,
  failingSince: true,
  createdAt: true,
  key: { select: ownerKeySelect },
} satisfies Prisma.WebhookEndpointSelect;
type EndpointRecord = Prisma.WebhookEndpointGetPayload<{ select: typeof endpointSelect }>;

/** Why nothing is sent to an endpoint. */
export type DisabledReason = 'FAILING' | 'KEY_REVOKED' | 'KEY_EXPIRED';

/** An endpoint as its managers see it: its key's end, or else its own disabling for failing. */
export interface EndpointRow extends Omit<EndpointRecord, 'key'> {
  /** The key that registered it; null: the account's (made in the dashboard). */
  key: { id: string; name: string; prefix: string } | null;
  disabledReason: DisabledReason | null;
}

/** The time a key stopped working, and why; null while it works. */
function keyEnd(key: EndpointRecord['key'], now: Date): { at: Date; reason: DisabledReason } | null {
  if (!key) return null;
  if (key.revokedAt) return { at: key.revokedAt, reason: 'KEY_REVOKED' };
  if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) return { at: key.expiresAt, reason: 'KEY_EXPIRED' };
  return null;
}

/** Its key's end outranks a failure: one can be enabled again, the other never. */
function endpointRow(record: EndpointRecord, now: Date): EndpointRow {
  const { key, ...endpoint } = record;
  const ended = keyEnd(key, now);
  return {
    ...endpoint,
    key: key && { id: key.id, name: key.name, prefix: key.prefix },
    disabledAt: ended?.at ?? endpoint.disabledAt,
    disabledReason: ended?.reason ?? (endpoint.disabledAt ? 'FAILING' : null),
  };
}

/** Whose an endpoint the actor registers is: its key's, or (the signed-in owner) the account's. */
function ownerOf(actor: Actor): { accountId: string; keyId: string | null } {
  if (actor.kind === 'key') return { accountId: actor.accountId, keyId: actor.keyId };
  if (actor.kind === 'session') return { accountId: actor.accountId, keyId: null };
  // The fields declare their scope and the dashboard's routes need a session: nothing else gets here.
  throw new Error(`Webhook endpoints are managed by a key or the account's owner, not by ${actor.kind}`);
}

/** The endpoints the actor manages: a key, those it registered; the signed-in owner, every one of the account's. */
function managedBy(actor: Actor): Prisma.WebhookEndpointWhereInput {
  const { accountId, keyId } = ownerOf(actor);
  return keyId === null ? { accountId } : { accountId, keyId };
}

/** Standard Webhooks' secret form: whsec_ and 32 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** Why the actor may not hear an event type, or null: its data must be something the registering key could read. */
function subscriptionProblem(actor: Actor, member: boolean, name: WebhookEventName): string | null {
  const type = WEBHOOK_EVENTS[name];
  if (type.membersOnly && !member) return `${name} is sent to accounts acting for a supplier only`;
  const missing = actor.kind === 'key' ? type.scopes.filter((s) => !hasScope(actor.scopes, s)) : [];
  return missing.length ? `${name} needs a key with ${missing.join(', ')}` : null;
}

/**
 * Registers an endpoint for the actor (a key: its own; the signed-in owner: the account's) and
 * answers it with its signing secret, which is never shown again. `step`: the caller's part of
 * the transaction.
 */
export async function createEndpoint(ctx: RequestContext, input: EndpointInput, step?: CreationStep) {
  const { accountId, keyId } = ownerOf(ctx.actor);
  const member = (await memberSupplierId(ctx)) !== null;
  const refused = input.events.map((name) => subscriptionProblem(ctx.actor, member, name)).filter((p): p is string => p !== null);
  if (refused.length) throw validationError({ events: refused.join('; ') }, INVALID);
  const urlProblem = await targetProblem(input.url, ctx.webhookPolicy);
  if (urlProblem) throw validationError({ url: urlProblem }, INVALID);
  const secret = newSecret();
  const endpoint = await ctx.prisma.$transaction(async (tx) => {
    await step?.before(tx);
    // The account's row lock makes the count and the insert one step for concurrent registrations.
    await tx.$queryRaw`SELECT id FROM "Account" WHERE id = ${accountId} FOR UPDATE`;
    if ((await tx.webhookEndpoint.count({ where: { accountId } })) >= MAX_ENDPOINTS) {
      throw new AppError('CONFLICT', `An account can have at most ${MAX_ENDPOINTS} webhook endpoints: delete one first`, { limit: MAX_ENDPOINTS });
    }
    const created = await tx.webhookEndpoint.create({
      data: { accountId, keyId, url: input.url, events: input.events, description: input.description ?? null, secret },
      select: endpointSelect,
    });
    await step?.after(tx, created.id);
    await recordByContext(inTransaction(ctx, tx), accountId, 'webhook.created', endpointDetails(created));
    return created;
  });
  return { ...endpointRow(endpoint, ctx.now()), secret };
}

/** The endpoints the actor manages, oldest first; `registeredBy`: only those of that key (the owner's view of a key). */
export async function listEndpoints(ctx: RequestContext, registeredBy?: string): Promise<EndpointRow[]> {
  const where = { ...managedBy(ctx.actor), ...(registeredBy === undefined ? {} : { keyId: registeredBy }) };
  const records = await ctx.prisma.webhookEndpoint.findMany({ where, select: endpointSelect, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  return records.map((r) => endpointRow(r, ctx.now()));
}

export async function endpointById(ctx: RequestContext, id: string): Promise<EndpointRow | null> {
  const record = await ctx.prisma.webhookEndpoint.findFirst({ where: { id, ...managedBy(ctx.actor) }, select: endpointSelect });
  return record && endpointRow(record, ctx.now());
}

/** The endpoints among `ids` the actor manages (node refetch: endpointById's rule, batched). */
export async function endpointsByIds(ctx: RequestContext, ids: string[]): Promise<EndpointRow[]> {
  const records = await ctx.prisma.webhookEndpoint.findMany({ where: { id: { in: ids }, ...managedBy(ctx.actor) }, select: endpointSelect });
  return records.map((r) => endpointRow(r, ctx.now()));
}

/** Deletes the endpoint with its deliveries (nothing more is sent to it); answers it as it was, or null. */
export async function deleteEndpoint(ctx: RequestContext, id: string): Promise<EndpointRow | null> {
  const where = { id, ...managedBy(ctx.actor) };
  const endpoint = await ctx.prisma.$transaction(async (tx) => {
    const found = await tx.webhookEndpoint.findFirst({ where, select: { ...endpointSelect, accountId: true } });
    if (!found) return null;
    const { count } = await tx.webhookEndpoint.deleteMany({ where: { id: found.id } });
    if (count) await recordByContext(inTransaction(ctx, tx), found.accountId, 'webhook.deleted', endpointDetails(found));
    return found;
  });
  return endpoint && endpointRow(endpoint, ctx.now());
}

/** An endpoint whose key has ended sends nothing again: it is registered anew with a working key. */
function refuseEndedKey(endpoint: EndpointRow): void {
  if (endpoint.disabledReason === 'KEY_REVOKED' || endpoint.disabledReason === 'KEY_EXPIRED') {
    const how = endpoint.disabledReason === 'KEY_REVOKED' ? 'was revoked' : 'has expired';
    throw new AppError('CONFLICT', `The API key that registered this endpoint ${how}: nothing is sent to it again; register the endpoint anew with a working key`, {
      disabledReason: endpoint.disabledReason,
    });
  }
}

/** Sends the endpoint a webhook.test event (one disabled for failing too: to check the receiver before enabling it). */
export async function sendTestEvent(ctx: RequestContext, id: string): Promise<DeliveryRow | null> {
  const endpoint = await endpointById(ctx, id);
  if (!endpoint) return null;
  refuseEndedKey(endpoint);
  return ctx.prisma.$transaction(async (tx) => {
    // Deleted meanwhile: no delivery (its row is locked while the event is written).
    const [still] = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM "WebhookEndpoint" WHERE id = ${endpoint.id} FOR SHARE`;
    if (!still) return null;
    const { eventId } = await writeEvent(tx, TEST_EVENT, testEventData(endpoint.id), [endpoint.id]);
    return tx.webhookDelivery.findUniqueOrThrow({ where: { eventId_endpointId: { eventId, endpointId: endpoint.id } }, select: deliverySelect });
  });
}

/** Sends to an endpoint disabled for failing again: its failures are forgotten; deliveries failed meanwhile stay failed. */
export async function enableEndpoint(ctx: RequestContext, id: string): Promise<EndpointRow | null> {
  const endpoint = await endpointById(ctx, id);
  if (!endpoint) return null;
  refuseEndedKey(endpoint);
  const enabled = await ctx.prisma.$transaction(async (tx) => {
    const found = await tx.webhookEndpoint.findFirst({ where: { id, ...managedBy(ctx.actor) }, select: { id: true, url: true, accountId: true, disabledAt: true } });
    if (!found) return false;
    await tx.webhookEndpoint.updateMany({ where: { id: found.id }, data: { disabledAt: null, failingSince: null } });
    if (found.disabledAt) await recordByContext(inTransaction(ctx, tx), found.accountId, 'webhook.enabled', endpointDetails(found));
    return true;
  });
  return enabled ? endpointById(ctx, id) : null;
}

// ----- deliveries -----

const deliverySelect = {
  id: true,
  status: true,
  attempts: true,
  nextAttemptAt: true,
  lastStatus: true,
  lastError: true,
  deliveredAt: true,
  createdAt: true,
  event: { select: { id: true, type: true, createdAt: true } },
  attemptLog: {
    select: { number: true, startedAt: true, finishedAt: true, outcome: true, statusCode: true, error: true, responseBody: true, durationMs: true },
    orderBy: { number: 'asc' },
  },
} satisfies Prisma.WebhookDeliverySelect;
export type DeliveryRow = Prisma.WebhookDeliveryGetPayload<{ select: typeof deliverySelect }>;

export interface DeliveryPage extends PageInput {
  where: Prisma.WebhookDeliveryWhereInput;
}

/** A page of the endpoint's deliveries, newest first; null when the account has no such endpoint. */
export async function deliveryPage(ctx: RequestContext, input: z.output<typeof deliveryListInput>): Promise<DeliveryPage | null> {
  const endpoint = await ctx.prisma.webhookEndpoint.findFirst({ where: { id: input.id, ...managedBy(ctx.actor) }, select: { id: true } });
  if (!endpoint) return null;
  return { page: input.page, limit: input.limit, where: { endpointId: endpoint.id, ...(input.status ? { status: input.status } : {}) } };
}

export async function listDeliveries(ctx: RequestContext, page: DeliveryPage): Promise<DeliveryRow[]> {
  const window = pageWindow(page);
  return window ? ctx.prisma.webhookDelivery.findMany({ where: page.where, select: deliverySelect, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], ...window }) : [];
}

/** The deliveries among `ids` to endpoints the actor manages (node refetch: what webhookDeliveries lists). */
export const deliveriesByIds = (ctx: RequestContext, ids: string[]): Promise<DeliveryRow[]> =>
  ctx.prisma.webhookDelivery.findMany({ where: { id: { in: ids }, endpoint: managedBy(ctx.actor) }, select: deliverySelect });

/** The events among `ids` delivered to an endpoint the actor manages (node refetch: an event is seen through its deliveries). */
export const eventsByIds = (ctx: RequestContext, ids: string[]): Promise<DeliveryRow['event'][]> =>
  ctx.prisma.webhookEvent.findMany({ where: { id: { in: ids }, deliveries: { some: { endpoint: managedBy(ctx.actor) } } }, select: deliverySelect.event.select });

export const countDeliveries = (ctx: RequestContext, page: DeliveryPage) => ctx.prisma.webhookDelivery.count({ where: page.where });
