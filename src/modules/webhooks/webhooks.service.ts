import type { CreationStep, RequestContext } from '../../context/context.js';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { hasScope } from '../../auth/scopes.js';
import type { PrismaClient } from '../../db/prisma.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { AppError, validationError } from '../../shared/errors.js';
import { pageParams, pageWindow, type PageInput } from '../../shared/pagination.js';
import { enumParam, idParam } from '../../shared/validation.js';
import { MAX_ENDPOINTS, TEST_EVENT, WEBHOOK_EVENT_NAMES, WEBHOOK_EVENTS, type WebhookEventName } from './events.js';
import { testEventData, writeEvent } from './outbox.js';
import { MAX_URL_LENGTH, targetProblem } from './targets.js';

// An account's webhook endpoints: registered through the API (a key that reads orders) or the
// dashboard (the account itself), at most MAX_ENDPOINTS each. Another account's endpoint is as
// absent as one that never existed.

export const MAX_DESCRIPTION = 500;
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;
const INVALID = 'Invalid webhook endpoint';

export const endpointInput = z
  .object({
    url: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`),
    events: z
      .array(enumParam(WEBHOOK_EVENT_NAMES), { error: `must be an array of event types (${WEBHOOK_EVENT_NAMES.join(', ')})` })
      .min(1, 'must name at least one event type')
      .transform((names) => [...new Set(names)]),
    description: z
      .string({ error: 'must be a string' })
      .max(MAX_DESCRIPTION, `must be at most ${MAX_DESCRIPTION} characters`)
      .refine((v) => !CONTROL_CHARS.test(v), 'must not contain control characters')
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

/** Who registers an endpoint: an account through one of its keys (its scopes), or itself in the dashboard (null). */
export interface EndpointOwner {
  accountId: string;
  scopes: readonly string[] | null;
  /** The account acts for a supplier. */
  member: boolean;
}

const endpointSelect = {
  id: true,
  url: true,
  events: true,
  description: true,
  disabledAt: true,
  failingSince: true,
  createdAt: true,
} satisfies Prisma.WebhookEndpointSelect;
export type EndpointRow = Prisma.WebhookEndpointGetPayload<{ select: typeof endpointSelect }>;

/** Standard Webhooks' secret form: whsec_ and 32 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** Why `owner` may not hear an event type, or null: its data must be something the owner could read. */
function subscriptionProblem(owner: EndpointOwner, name: WebhookEventName): string | null {
  const type = WEBHOOK_EVENTS[name];
  if (type.membersOnly && !owner.member) return `${name} is sent to accounts acting for a supplier only`;
  const missing = owner.scopes ? type.scopes.filter((s) => !hasScope(owner.scopes!, s)) : [];
  return missing.length ? `${name} needs a key with ${missing.join(', ')}` : null;
}

/** Registers an endpoint and answers it with its signing secret, which is never shown again. `step`: the caller's part of the transaction. */
export async function createEndpoint(ctx: RequestContext, owner: EndpointOwner, input: EndpointInput, step?: CreationStep) {
  const refused = input.events.map((name) => subscriptionProblem(owner, name)).filter((p): p is string => p !== null);
  if (refused.length) throw validationError({ events: refused.join('; ') }, INVALID);
  const urlProblem = await targetProblem(input.url, ctx.webhookPolicy);
  if (urlProblem) throw validationError({ url: urlProblem }, INVALID);
  const secret = newSecret();
  const endpoint = await ctx.prisma.$transaction(async (tx) => {
    await step?.before(tx);
    // The account's row lock makes the count and the insert one step for concurrent registrations.
    await tx.$queryRaw`SELECT id FROM "Account" WHERE id = ${owner.accountId} FOR UPDATE`;
    if ((await tx.webhookEndpoint.count({ where: { accountId: owner.accountId } })) >= MAX_ENDPOINTS) {
      throw new AppError('CONFLICT', `An account can have at most ${MAX_ENDPOINTS} webhook endpoints: delete one first`, { limit: MAX_ENDPOINTS });
    }
    const created = await tx.webhookEndpoint.create({
      data: { accountId: owner.accountId, url: input.url, events: input.events, description: input.description ?? null, secret },
      select: endpointSelect,
    });
    await step?.after(tx, created.id);
    return created;
  });
  return { ...endpoint, secret };
}

export const listEndpoints = (ctx: RequestContext, accountId: string) =>
  ctx.prisma.webhookEndpoint.findMany({ where: { accountId }, select: endpointSelect, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });

export const endpointById = (ctx: RequestContext, accountId: string, id: string) =>
  ctx.prisma.webhookEndpoint.findFirst({ where: { id, accountId }, select: endpointSelect });

/** Deletes the endpoint with its deliveries (nothing more is sent to it); answers it as it was, or null. */
export async function deleteEndpoint(ctx: RequestContext, accountId: string, id: string): Promise<EndpointRow | null> {
  const [endpoint] = await ctx.prisma.$transaction([
    ctx.prisma.webhookEndpoint.findFirst({ where: { id, accountId }, select: endpointSelect }),
    ctx.prisma.webhookEndpoint.deleteMany({ where: { id, accountId } }),
  ]);
  return endpoint;
}

/** Sends the endpoint a webhook.test event (a disabled one too: to check the receiver before enabling it). */
export async function sendTestEvent(ctx: RequestContext, accountId: string, id: string): Promise<DeliveryRow | null> {
  return ctx.prisma.$transaction(async (tx) => {
    const endpoint = await tx.webhookEndpoint.findFirst({ where: { id, accountId }, select: { id: true } });
    if (!endpoint) return null;
    const { eventId } = await writeEvent(tx, TEST_EVENT, testEventData(endpoint.id), [endpoint.id]);
    return tx.webhookDelivery.findUniqueOrThrow({ where: { eventId_endpointId: { eventId, endpointId: endpoint.id } }, select: deliverySelect });
  });
}

/** Sends to a disabled endpoint again: its failures are forgotten; deliveries failed meanwhile stay failed. */
export async function enableEndpoint(ctx: RequestContext, accountId: string, id: string): Promise<EndpointRow | null> {
  const { count } = await ctx.prisma.webhookEndpoint.updateMany({ where: { id, accountId }, data: { disabledAt: null, failingSince: null } });
  return count ? endpointById(ctx, accountId, id) : null;
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
export async function deliveryPage(ctx: RequestContext, accountId: string, input: z.output<typeof deliveryListInput>): Promise<DeliveryPage | null> {
  const endpoint = await ctx.prisma.webhookEndpoint.findFirst({ where: { id: input.id, accountId }, select: { id: true } });
  if (!endpoint) return null;
  return { page: input.page, limit: input.limit, where: { endpointId: endpoint.id, ...(input.status ? { status: input.status } : {}) } };
}

export async function listDeliveries(ctx: RequestContext, page: DeliveryPage): Promise<DeliveryRow[]> {
  const window = pageWindow(page);
  return window ? ctx.prisma.webhookDelivery.findMany({ where: page.where, select: deliverySelect, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], ...window }) : [];
}

export const countDeliveries = (ctx: RequestContext, page: DeliveryPage) => ctx.prisma.webhookDelivery.count({ where: page.where });
