import type { Scope } from '../../auth/scopes.js';
import { READ_STOCK } from '../inventory/inventory.service.js';
import { READ_ORDERS } from '../orders/orders.service.js';

// The events an endpoint can subscribe to, declared once: the API's validation, the dashboard's
// checkboxes, the docs' table and the outbox's fan-out all read this table.

export interface WebhookEventType {
  description: string;
  /** What the receiving account's key must be able to read: its `data` is that REST representation. */
  scopes: readonly Scope[];
  /** Sent to members of a supplier only (the account must act for one to subscribe). */
  membersOnly: boolean;
}

export const WEBHOOK_EVENTS = {
  'order.created': {
    description: 'An order was placed: sent to its buyer and to the members of its supplier',
    scopes: [READ_ORDERS],
    membersOnly: false,
  },
  'order.status_changed': {
    description: 'An order moved to another status (from, to, actor): sent to its buyer and to the members of its supplier',
    scopes: [READ_ORDERS],
    membersOnly: false,
  },
  'stock.low': {
    description: "A tracked product's stock fell to or below its lowStockThreshold: sent to the members of its supplier",
    scopes: [READ_STOCK],
    membersOnly: true,
  },
} as const satisfies Record<string, WebhookEventType>;

export type WebhookEventName = keyof typeof WEBHOOK_EVENTS;
export const WEBHOOK_EVENT_NAMES = Object.keys(WEBHOOK_EVENTS) as [WebhookEventName, ...WebhookEventName[]];

/** Sent by POST /api/webhooks/{id}/test to that endpoint only, whatever it subscribes to. */
export const TEST_EVENT = 'webhook.test';

/** Endpoints one account may have. */
export const MAX_ENDPOINTS = 10;

/** The scope that manages a key's own endpoints: a scope of its own, never implied by a read scope. */
export const MANAGE_WEBHOOKS: Scope = 'write:webhooks';
