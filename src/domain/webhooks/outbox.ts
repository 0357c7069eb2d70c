import { randomBytes } from 'node:crypto';
import { EVERY_SCOPE } from '../../auth/scopes.js';
import type { KeyCaller } from '../../context/actor.js';
import type { EventsOfChange, StockChange } from '../../context/context.js';
import { Prisma } from '../../generated/prisma/client.js';
import type { Representation } from '../representations.js';
import { traceHeaders } from '../../tracing/spans.js';
import { TEST_EVENT, WEBHOOK_EVENTS, type WebhookEventName } from './events.js';

// The transactional outbox. A change writes its event, and one delivery row per endpoint that
// hears it, in its own transaction: committed together or not at all, so an event can be neither
// lost (the change committed, its event not) nor invented (the change rolled back). The worker
// (worker.ts) is woken by the NOTIFY, which PostgreSQL sends only when the transaction commits.
// An event nobody subscribes to costs one query and writes nothing.

/** The channel the worker LISTENs on. */
export const OUTBOX_CHANNEL = 'webhook_outbox';

/**
 * The endpoint `e` may be sent something that needs `scopes`: it is the account's (made in the
 * dashboard), or the key that registered it still works (neither revoked nor expired, by the
 * database's clock) and carries them. The outbox's fan-out and the worker's every claim ask it, so
 * a key revoked by any means (CLI, dashboard, SQL) silences its endpoints from that moment.
 */
export function endpointKeyAllows(scopes: readonly string[]): Prisma.Sql {
  return Prisma.sql`(e."keyId" IS NULL OR EXISTS (
    SELECT 1 FROM "ApiKey" k WHERE k.id = e."keyId" AND k."revokedAt" IS NULL AND (k."expiresAt" IS NULL OR k."expiresAt" > now())
      AND (k.scopes @> ${scopes}::text[] OR ${EVERY_SCOPE} = ANY(k.scopes))))`;
}

/** The endpoint `e` hears `type` now: active, subscribed to it, and allowed its data. */
const hears = (type: WebhookEventName) =>
  Prisma.sql`e."disabledAt" IS NULL AND ${type} = ANY(e.events) AND ${endpointKeyAllows(WEBHOOK_EVENTS[type].scopes)}`;

/** An event's id: the webhook-id header, the same on every attempt, for receivers to deduplicate. */
const eventId = () => `msg_${Date.now().toString(36)}${randomBytes(12).toString('base64url')}`;

/** The payload every event has (Standard Webhooks): `data` is the REST representation of the resource. */
const eventPayload = (type: string, at: Date, data: unknown) => JSON.stringify({ type, timestamp: at.toISOString(), data });

/** Writes an event and its deliveries with `tx`; `endpointIds` must not be empty. */
export async function writeEvent(tx: Prisma.TransactionClient, type: string, data: unknown, endpointIds: readonly string[]): Promise<{ eventId: string }> {
  const id = eventId();
  const now = new Date();
  // The trace the change is part of (none while tracing is off): each delivery continues it.
  const { traceparent, tracestate } = traceHeaders();
  await tx.webhookEvent.create({
    data: {
      id,
      type,
      payload: eventPayload(type, now, data),
      createdAt: now,
      traceparent,
      tracestate,
      deliveries: { createMany: { data: endpointIds.map((endpointId) => ({ endpointId, nextAttemptAt: now })) } },
    },
    select: { id: true },
  });
  await tx.$executeRaw`SELECT pg_notify(${OUTBOX_CHANNEL}, '')`;
  return { eventId: id };
}

/** Who reads an event's resource: the account's own view, with the scopes the event type needs. */
const readerOf = (accountId: string, type: WebhookEventName): KeyCaller => ({
  kind: 'key',
  ip: 'webhooks',
  keyId: 'webhooks',
  accountId,
  plan: 'BASIC',
  scopes: [...WEBHOOK_EVENTS[type].scopes],
  rateLimit: null,
  rateWindowSeconds: null,
});

/** The events a change tells, by the rules of events.ts. */
export function createOutbox(representation: Representation): EventsOfChange {
  /**
   * The active endpoints subscribed to `type` of the order's buyer and of its supplier's members
   * (an account that is both hears it once per endpoint), with the buyer, whose view of the order
   * is the representation (a member's is the same).
   */
  async function orderAudience(tx: Prisma.TransactionClient, type: WebhookEventName, orderId: string) {
    return tx.$queryRaw<{ id: string; buyerId: string }[]>`
      SELECT e.id, o."buyerId" FROM "Order" o
      JOIN "WebhookEndpoint" e ON e."accountId" = o."buyerId"
        OR e."accountId" IN (SELECT m."accountId" FROM "SupplierMember" m WHERE m."supplierId" = o."supplierId")
      WHERE o.id = ${orderId} AND ${hears(type)}`;
  }

  async function orderEvent(tx: Prisma.TransactionClient, type: WebhookEventName, orderId: string, extra: object = {}) {
    const audience = await orderAudience(tx, type, orderId);
    if (!audience.length) return;
    const order = await representation(tx, readerOf(audience[0]!.buyerId, type), 'order', orderId);
    await writeEvent(tx, type, { ...(order as object), ...extra }, audience.map((a) => a.id));
  }

  return {
    orderCreated: (tx, orderId) => orderEvent(tx, 'order.created', orderId),
    orderStatusChanged: (tx, orderId, change) => orderEvent(tx, 'order.status_changed', orderId, change),
    async stockChanged(tx, supplierId, changes) {
      const type: WebhookEventName = 'stock.low';
      const fell = changes.filter(isLowStockFall);
      if (!fell.length) return;
      const audience = await tx.$queryRaw<{ id: string; accountId: string }[]>`
        SELECT e.id, e."accountId" FROM "WebhookEndpoint" e
        JOIN "SupplierMember" m ON m."accountId" = e."accountId" AND m."supplierId" = ${supplierId}
        WHERE ${hears(type)}`;
      if (!audience.length) return;
      for (const change of fell) {
        const record = await representation(tx, readerOf(audience[0]!.accountId, type), 'stock', change.productId);
        await writeEvent(tx, type, record, audience.map((a) => a.id));
      }
    },
  };
}

/** stock.low's rule: a tracked product's stock went from above its threshold to at or below it. */
const isLowStockFall = (c: StockChange) => c.trackInventory && c.before > c.lowStockThreshold && c.after <= c.lowStockThreshold;

/** The data of a test event. */
export const testEventData = (endpointId: string) => ({ endpointId, message: `A ${TEST_EVENT} event, sent on request: deliveries reach this endpoint.` });
