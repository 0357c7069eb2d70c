import { MAX_ENDPOINTS } from '../domain/webhooks/events.js';
import {
  countDeliveries,
  createEndpoint,
  deleteEndpoint,
  deliveryPage,
  enableEndpoint,
  endpointById,
  endpointInput,
  listDeliveries,
  listEndpoints,
  sendTestEvent,
} from '../domain/webhooks/webhooks.service.js';
import { AppError, asAppError } from '../shared/errors.js';
import { deleteWebhookPage, newWebhookPage, webhookPage, webhookSecretShownPage, webhooksPage, type WebhookFormValues } from './pages/webhooks-page.js';
import { createOnce, newFormToken } from './form-once.js';
import { createdPath, keepToShowOnce, takeShownOnce } from './shown-once.js';
import { fieldsOf, pageNumberOf, readForm, redirectTo, showPage, type SignedInVisit } from './visit.js';

// The account's endpoints, as /api/webhooks manages a key's: the signed-in owner sees and manages
// every one (those its keys registered too, each with its key), registers the account's own (no
// key, so no scopes), and is offered members-only event types (stock.low) as a member only.

const NO_ENDPOINT = 'There is no such webhook endpoint among yours.';
const DELIVERIES_PER_PAGE = 20;

async function showWebhooks(visit: SignedInVisit, status: number, form?: { values: WebhookFormValues; errors: Record<string, string>; message?: string }) {
  const endpoints = await listEndpoints(visit.ctx);
  const body = webhooksPage(visit.csrfToken, { endpoints, member: visit.member !== null, requireHttps: visit.ctx.webhookPolicy.requireHttps, max: MAX_ENDPOINTS, formToken: newFormToken(), ...form });
  return showPage(visit, status, { title: 'Webhooks', current: 'webhooks', body });
}

async function endpointOrNotFound(visit: SignedInVisit, id: string) {
  const endpoint = await endpointById(visit.ctx, id);
  if (!endpoint) throw new AppError('NOT_FOUND', NO_ENDPOINT);
  return endpoint;
}

export const getWebhooks = (visit: SignedInVisit) => showWebhooks(visit, 200);

export async function postWebhook(visit: SignedInVisit) {
  const form = await readForm(visit);
  const values = { url: form.get('url') ?? '', events: form.getAll('events'), description: form.get('description') ?? '' };
  const parsed = endpointInput.safeParse({ url: values.url, events: values.events, ...(values.description.trim() ? { description: values.description } : {}) });
  const errors: Record<string, string> = {};
  if (!parsed.success) for (const issue of parsed.error.issues) errors[String(issue.path[0] ?? 'url')] ??= issue.message;
  // Who may hear what (stock.low: members only) is the service's rule: its refusal comes back below.
  if (!parsed.success) return showWebhooks(visit, 400, { values, errors });
  try {
    const outcome = await createOnce(visit, form, 'webhook', (step) => createEndpoint(visit.ctx, parsed.data, step));
    if ('createdBefore' in outcome) return redirectTo(visit, createdPath('webhook', outcome.createdBefore));
    const endpoint = outcome.created;
    return redirectTo(visit, keepToShowOnce(visit, 'webhook', endpoint.id, endpoint.secret));
  } catch (error) {
    const known = asAppError(error);
    if (known?.code === 'VALIDATION_ERROR') {
      const fields = fieldsOf(known);
      return showWebhooks(visit, 400, { values, errors: fields, message: Object.keys(fields).length ? undefined : known.message });
    }
    if (known?.code === 'CONFLICT') return showWebhooks(visit, 409, { values, errors: {}, message: known.message });
    throw error;
  }
}

/** Where adding an endpoint leads: its signing secret on the first GET only (shown-once.ts). */
export async function getCreatedWebhook(visit: SignedInVisit, [id]: string[]) {
  const endpoint = await endpointOrNotFound(visit, id!);
  const secret = takeShownOnce(visit, 'webhook', endpoint.id);
  const body = secret === null ? webhookSecretShownPage(endpoint) : newWebhookPage({ ...endpoint, secret });
  return showPage(visit, 200, { title: 'Your new webhook endpoint', current: 'webhooks', body });
}

export async function getWebhook(visit: SignedInVisit, [id]: string[]) {
  const endpoint = await endpointOrNotFound(visit, id!);
  const number = pageNumberOf(visit);
  const page = await deliveryPage(visit.ctx, { id: endpoint.id, page: number, limit: DELIVERIES_PER_PAGE });
  // Deleted in between: as absent as one that never existed.
  if (!page) throw new AppError('NOT_FOUND', NO_ENDPOINT);
  const [deliveries, total] = await Promise.all([listDeliveries(visit.ctx, page), countDeliveries(visit.ctx, page)]);
  const body = webhookPage(visit.csrfToken, { endpoint, deliveries, page: { number, total, perPage: DELIVERIES_PER_PAGE } });
  return showPage(visit, 200, { title: 'Webhook endpoint', current: 'webhooks', body });
}

export async function postWebhookTest(visit: SignedInVisit, [id]: string[]) {
  await readForm(visit);
  if (!(await sendTestEvent(visit.ctx, id!))) throw new AppError('NOT_FOUND', NO_ENDPOINT);
  return redirectTo(visit, `/dashboard/webhooks/${id}?done=webhook-test-sent`);
}

export async function postWebhookEnable(visit: SignedInVisit, [id]: string[]) {
  await readForm(visit);
  if (!(await enableEndpoint(visit.ctx, id!))) throw new AppError('NOT_FOUND', NO_ENDPOINT);
  return redirectTo(visit, `/dashboard/webhooks/${id}?done=webhook-enabled`);
}

export async function getDeleteWebhook(visit: SignedInVisit, [id]: string[]) {
  const endpoint = await endpointOrNotFound(visit, id!);
  return showPage(visit, 200, { title: 'Delete webhook endpoint', current: 'webhooks', body: deleteWebhookPage(visit.csrfToken, endpoint) });
}

export async function postDeleteWebhook(visit: SignedInVisit, [id]: string[]) {
  await readForm(visit);
  if (!(await deleteEndpoint(visit.ctx, id!))) throw new AppError('NOT_FOUND', NO_ENDPOINT);
  return redirectTo(visit, '/dashboard/webhooks?done=webhook-deleted');
}
