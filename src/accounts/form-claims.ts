import type { CreationStep, RequestContext } from '../context/context.js';
import { validationError } from '../shared/errors.js';
import { hashToken } from '../shared/tokens.js';
import { SESSION_ABSOLUTE_MS } from './sessions.js';

// The one-time tokens of the dashboard's create forms (an API key, a webhook endpoint, an
// address), claimed in the database, so that a form sent twice creates one thing whichever
// instances the two sendings reach. The first sending claims the token in the transaction that
// creates (a CreationStep), so the claim and the creation commit together: a creation refused
// leaves the token unclaimed. A concurrent sending's claim waits on the first's uncommitted row
// (the token is the primary key), finds it once committed and throws FormSentBefore, creating
// nothing. Under READ COMMITTED, the services' isolation: the row committed meanwhile is seen.

export type FormKind = 'key' | 'webhook' | 'address';

/** One sending of a create form: whose it is, what it creates, and the token it carried. */
export interface FormSending {
  accountId: string;
  kind: FormKind;
  token: string;
}

/** Thrown out of a creation by a sending whose token another sending claimed: what that one created. */
export class FormSentBefore extends Error {
  constructor(readonly createdId: string) {
    super('This form was sent before');
  }
}

/**
 * A form is sent with its session's CSRF token, and a session lasts at most SESSION_ABSOLUTE_MS:
 * a claim older than that (and an hour for the instances' clocks) can never be met again.
 */
const CLAIM_KEPT_MS = SESSION_ABSOLUTE_MS + 3600_000;

interface ClaimRow {
  accountId: string;
  kind: string;
  createdId: string | null;
}

/** A token claimed by another account's form (or one of another kind): refused, and the form shown again with a fresh token. */
const claimedElsewhere = () => validationError({}, 'This form was sent already from another account: check it and send it again.');

/** What the claim's sending created, when `sending` is the same account's same form; never what another account created. */
function createdFor(claim: ClaimRow, sending: FormSending): string {
  if (claim.accountId !== sending.accountId || claim.kind !== sending.kind || claim.createdId === null) throw claimedElsewhere();
  return claim.createdId;
}

/** What an earlier sending of this form created (committed), or null when its token is unclaimed. */
export async function createdBefore(ctx: RequestContext, sending: FormSending): Promise<string | null> {
  const claim = await ctx.prisma.formClaim.findUnique({ where: { tokenHash: hashToken(sending.token) }, select: { accountId: true, kind: true, createdId: true } });
  return claim && createdFor(claim, sending);
}

/** The creation's step that claims the sending's token first, and records what was created last. */
export function claimStep(sending: FormSending, now: Date): CreationStep {
  const tokenHash = hashToken(sending.token);
  return {
    async before(tx) {
      // INSERT … ON CONFLICT DO NOTHING: it waits while another transaction holds the token
      // uncommitted, and inserts nothing once that one has committed it.
      const { count } = await tx.formClaim.createMany({ data: [{ tokenHash, accountId: sending.accountId, kind: sending.kind, createdAt: now }], skipDuplicates: true });
      if (count === 1) return;
      const claim = await tx.formClaim.findUnique({ where: { tokenHash }, select: { accountId: true, kind: true, createdId: true } });
      // Deleted in between (by hand: it cannot have aged out so soon): nothing to answer with.
      if (!claim) throw claimedElsewhere();
      throw new FormSentBefore(createdFor(claim, sending));
    },
    async after(tx, createdId) {
      await tx.formClaim.update({ where: { tokenHash }, data: { createdId } });
    },
  };
}

/** Deletes the claims no form can meet any more: called after each creation through a form, so no job is needed. */
export async function deleteOldFormClaims(ctx: RequestContext): Promise<void> {
  await ctx.prisma.formClaim.deleteMany({ where: { createdAt: { lt: new Date(ctx.now().getTime() - CLAIM_KEPT_MS) } } });
}
