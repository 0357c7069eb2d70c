import { claimStep, createdBefore, deleteOldFormClaims, FormSentBefore, type FormKind } from '../accounts/form-claims.js';
import type { CreationStep } from '../context/context.js';
import { validationError } from '../shared/errors.js';
import { looksLikeToken, randomToken } from '../shared/tokens.js';
import { FORM_TOKEN_FIELD } from './layout.js';
import type { SignedInVisit } from './visit.js';

// A create form sent twice (a double click, a browser's retry, a POST sent again) creates one
// thing. Each rendering of a create form carries a fresh one-time token (FORM_TOKEN_FIELD); the
// creation claims it in its own transaction (src/accounts/form-claims.ts), and a sending whose
// token is claimed is answered as the first was, with a redirect to what the first created. That
// page shows no secret a second time: the secret went in the first answer's cookie (shown-once.ts).

/** A fresh token for one rendering of a create form. */
export const newFormToken = (): string => randomToken();

/** What a sending of a create form comes to: what it created, or the id of what the form's first sending created. */
export type CreatedOnce<T> = { created: T } | { createdBefore: string };

/**
 * Runs `create` (a service given the claim as its CreationStep) once per form token. A form
 * without a well-formed token (a page cached from before tokens, or tampered with) is refused
 * with a VALIDATION_ERROR, so the handler shows it again with a fresh token: creating without
 * one could create twice.
 */
export async function createOnce<T>(visit: SignedInVisit, form: URLSearchParams, kind: FormKind, create: (step: CreationStep) => Promise<T>): Promise<CreatedOnce<T>> {
  const token = form.get(FORM_TOKEN_FIELD);
  if (!looksLikeToken(token)) throw validationError({}, 'This form is out of date: check it and send it again.');
  const sending = { accountId: visit.session.accountId, kind, token };
  // A sending after the first has committed is answered before its fields are checked again: a
  // webhook URL's host, say, may resolve otherwise by now.
  const earlier = await createdBefore(visit.ctx, sending);
  if (earlier !== null) return { createdBefore: earlier };
  try {
    const created = await create(claimStep(sending, visit.now));
    await deleteOldFormClaims(visit.ctx).catch((error: unknown) => visit.ctx.logger.warn({ err: error }, 'deleting old form claims failed'));
    return { created };
  } catch (error) {
    // A concurrent sending claimed it first: its transaction committed, this one created nothing.
    if (error instanceof FormSentBefore) return { createdBefore: error.createdId };
    throw error;
  }
}
