import { z } from 'zod';
import { builder } from '../../graphql/builder.js';
import { withInput } from '../../graphql/field-rules.js';
import { implementNode } from '../../graphql/nodes.js';
import { metaFor, pageArgs, PaginationMetaRef } from '../../graphql/pagination-types.js';
import { idParam } from '../../shared/validation.js';
import { MANAGE_WEBHOOKS, MAX_ENDPOINTS, TEST_EVENT, WEBHOOK_EVENT_NAMES } from './events.js';
import { RESPONSE_BODY_LIMIT } from './send.js';
import {
  countDeliveries,
  createEndpoint,
  deleteEndpoint,
  deliveryListInput,
  deliveryPage,
  deliveriesByIds,
  endpointById,
  endpointsByIds,
  eventsByIds,
  endpointRule,
  enableEndpoint,
  listDeliveries,
  listEndpoints,
  MAX_DESCRIPTION,
  sendTestEvent,
  type DeliveryPage,
  type DeliveryRow,
  type EndpointRow,
} from './webhooks.service.js';

const WebhookEndpointStatusRef = builder.enumType('WebhookEndpointStatus', {
  values: {
    ACTIVE: { description: 'Events are sent to it' },
    DISABLED: { description: 'It failed for a whole retry schedule (3 days by default): nothing is sent until it is enabled again' },
  },
});

type EndpointShape = EndpointRow & { secret?: string };

function implementEndpoint(name: string, description: string, withSecret: boolean) {
  return builder.objectRef<EndpointShape>(name).implement({
    description,
    fields: (t) => ({
      id: t.exposeID('id'),
      url: t.exposeString('url'),
      events: t.exposeStringList('events', { description: `Event types sent to it: ${WEBHOOK_EVENT_NAMES.join(', ')}` }),
      description: t.exposeString('description', { nullable: true }),
      status: t.field({ type: WebhookEndpointStatusRef, resolve: (e) => (e.disabledAt ? 'DISABLED' : 'ACTIVE') }),
      disabledAt: t.expose('disabledAt', { type: 'DateTime', nullable: true, description: 'When it was disabled for failing; null while active' }),
      failingSince: t.expose('failingSince', { type: 'DateTime', nullable: true, description: 'Its first failed attempt since its last success; null while it succeeds' }),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
      ...(withSecret
        ? {
            secret: t.string({
              description: 'The signing secret (whsec_…), to verify the webhook-signature header: shown this once, never again',
              resolve: (e) => e.secret!,
            }),
          }
        : {}),
    }),
  });
}

const WebhookEndpointRef = implementEndpoint('WebhookEndpoint', 'Where the account’s events are sent, signed per Standard Webhooks', false);
const NewWebhookEndpointRef = implementEndpoint('NewWebhookEndpoint', 'An endpoint just registered, with its signing secret', true);
// NewWebhookEndpoint is no Node: it is the one answer that holds the secret; its endpoint is refetched as a WebhookEndpoint.
implementNode(WebhookEndpointRef, { scopes: [MANAGE_WEBHOOKS], load: endpointsByIds });

const WebhookEndpointListRef = builder.objectRef<{ items: EndpointRow[] }>('WebhookEndpointList').implement({
  fields: (t) => ({ items: t.field({ type: [WebhookEndpointRef], resolve: (list) => list.items }) }),
});

const WebhookEventRef = builder.objectRef<DeliveryRow['event']>('WebhookEvent').implement({
  description: 'An event as the outbox keeps it; its id is the webhook-id header of every attempt',
  fields: (t) => ({
    id: t.exposeID('id'),
    type: t.exposeString('type', { description: `One of ${WEBHOOK_EVENT_NAMES.join(', ')}, or ${TEST_EVENT}` }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

implementNode(WebhookEventRef, { scopes: [MANAGE_WEBHOOKS], load: eventsByIds });

const WebhookDeliveryStatusRef = builder.enumType('WebhookDeliveryStatus', {
  values: {
    PENDING: { description: 'Not delivered yet: an attempt is due at nextRetryAt' },
    DELIVERED: { description: 'The endpoint answered 2xx' },
    FAILED: { description: 'Every attempt of the retry schedule failed, or the endpoint was disabled' },
  },
});

const WebhookAttemptRef = builder.objectRef<DeliveryRow['attemptLog'][number]>('WebhookAttempt').implement({
  fields: (t) => ({
    number: t.exposeInt('number'),
    startedAt: t.expose('startedAt', { type: 'DateTime' }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true, description: 'Null while it runs, or when the service stopped during it' }),
    outcome: t.exposeString('outcome', {
      nullable: true,
      description: 'success, http_error, timeout (10 s by default), connection_error or refused_target; null like finishedAt',
    }),
    statusCode: t.exposeInt('statusCode', { nullable: true, description: 'What the endpoint answered, when it answered' }),
    error: t.exposeString('error', { nullable: true }),
    responseBody: t.exposeString('responseBody', { nullable: true, description: `The first ${RESPONSE_BODY_LIMIT} bytes of the answer at most` }),
    durationMs: t.exposeInt('durationMs', { nullable: true }),
  }),
});

const WebhookDeliveryRef = builder.objectRef<DeliveryRow>('WebhookDelivery').implement({
  description: 'One event to one endpoint, with every attempt',
  fields: (t) => ({
    id: t.exposeID('id'),
    event: t.field({ type: WebhookEventRef, resolve: (d) => d.event }),
    status: t.expose('status', { type: WebhookDeliveryStatusRef }),
    attempts: t.exposeInt('attempts', { description: 'Attempts started' }),
    lastStatus: t.exposeInt('lastStatus', { nullable: true, description: 'The HTTP status of the last answer' }),
    lastError: t.exposeString('lastError', { nullable: true }),
    nextRetryAt: t.expose('nextAttemptAt', { type: 'DateTime', nullable: true, description: 'When the next attempt is due; null once delivered or failed' }),
    deliveredAt: t.expose('deliveredAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    attemptLog: t.field({ type: [WebhookAttemptRef], description: 'Every attempt, oldest first', resolve: (d) => d.attemptLog }),
  }),
});

implementNode(WebhookDeliveryRef, { scopes: [MANAGE_WEBHOOKS], load: deliveriesByIds });

const WebhookDeliveryListRef = builder.objectRef<DeliveryPage>('WebhookDeliveryList').implement({
  fields: (t) => ({
    items: t.field({ type: [WebhookDeliveryRef], resolve: (page, _args, ctx) => listDeliveries(ctx, page) }),
    meta: t.field({ type: PaginationMetaRef, resolve: (page, _args, ctx) => metaFor(page, countDeliveries(ctx, page)) }),
  }),
});

const WebhookEndpointInputRef = builder.inputType('WebhookEndpointInput', {
  fields: (t) => ({
    url: t.string({ required: true, description: 'https (http outside production); never a private, loopback or link-local address' }),
    events: t.stringList({ required: true, description: `Event types: ${WEBHOOK_EVENT_NAMES.join(', ')}` }),
    description: t.string({ description: `At most ${MAX_DESCRIPTION} characters` }),
  }),
});

const byId = z.object({ id: idParam }).strict();

builder.queryFields((t) => ({
  webhookEndpoints: t.field({
    type: WebhookEndpointListRef,
    description: `The endpoints this key registered (an account has at most ${MAX_ENDPOINTS}), oldest first`,
    scopes: [MANAGE_WEBHOOKS],
    uncached: true,
    resolve: async (_root, _args, ctx) => ({ items: await listEndpoints(ctx) }),
  }),
  webhookEndpoint: t.field({
    type: WebhookEndpointRef,
    nullable: true,
    description: 'One of the endpoints this key registered; null when it does not exist or is another key’s',
    args: { id: t.arg.id({ required: true }) },
    lookupBy: 'id',
    scopes: [MANAGE_WEBHOOKS],
    uncached: true,
    resolve: (_root, args, ctx) => endpointById(ctx, String(args.id)),
  }),
  webhookDeliveries: t.field({
    type: WebhookDeliveryListRef,
    nullable: true,
    description: 'The deliveries of one of this key’s endpoints, newest first; null when it has no such endpoint',
    args: { id: t.arg.id({ required: true, description: 'The endpoint' }), ...pageArgs, status: t.arg({ type: WebhookDeliveryStatusRef }) },
    lookupBy: 'id',
    scopes: [MANAGE_WEBHOOKS],
    uncached: true,
    ...withInput(deliveryListInput, (input, ctx) => deliveryPage(ctx, input)),
  }),
}));

builder.mutationFields((t) => ({
  createWebhookEndpoint: t.field({
    type: NewWebhookEndpointRef,
    description: `Registers a webhook endpoint of this key's (at most ${MAX_ENDPOINTS} per account): it hears only what the key may read and stops when the key is revoked or expires; the answer holds its signing secret, shown this once`,
    args: { input: t.arg({ type: WebhookEndpointInputRef, required: true }) },
    scopes: [MANAGE_WEBHOOKS],
    ...withInput(endpointRule, (input, ctx) => createEndpoint(ctx, input)),
  }),
  deleteWebhookEndpoint: t.field({
    type: WebhookEndpointRef,
    nullable: true,
    description: 'Deletes one of this key’s endpoints and its deliveries; answers it as it was, or null when there is no such endpoint',
    args: { id: t.arg.id({ required: true }) },
    lookupBy: 'id',
    scopes: [MANAGE_WEBHOOKS],
    ...withInput(byId, (input, ctx) => deleteEndpoint(ctx, input.id)),
  }),
  testWebhookEndpoint: t.field({
    type: WebhookDeliveryRef,
    nullable: true,
    description: `Sends the endpoint a ${TEST_EVENT} event (a disabled one too); answers its delivery, or null when there is no such endpoint`,
    args: { id: t.arg.id({ required: true }) },
    lookupBy: 'id',
    scopes: [MANAGE_WEBHOOKS],
    ...withInput(byId, (input, ctx) => sendTestEvent(ctx, input.id)),
  }),
  enableWebhookEndpoint: t.field({
    type: WebhookEndpointRef,
    nullable: true,
    description: 'Sends a disabled endpoint events again (those failed meanwhile stay failed); null when there is no such endpoint',
    args: { id: t.arg.id({ required: true }) },
    lookupBy: 'id',
    scopes: [MANAGE_WEBHOOKS],
    ...withInput(byId, (input, ctx) => enableEndpoint(ctx, input.id)),
  }),
}));
