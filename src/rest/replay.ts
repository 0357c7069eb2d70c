import type { ApiContext, IdempotencyReport } from '../context/context.js';

// A REST replay is the first answer's very bytes (docs/api.md, "Idempotency"): the order domain
// stores what a key produced (an order, or a rejection), and this keeps the REST body that was
// sent for it beside that record, so that a retry over REST gets the same text even if the
// catalogue (names, ratings) has changed since.

/** Sent with every answer replayed from an Idempotency-Key, over REST and GraphQL alike. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

const recordOf = ({ accountId, key }: IdempotencyReport) => ({ accountId, key });

/** The body first sent over REST for the key, or null (first answered over GraphQL, or not kept). */
export async function keptRestBody(ctx: ApiContext, report: IdempotencyReport): Promise<string | null> {
  const record = await ctx.prisma.idempotencyRecord.findUnique({ where: { accountId_key: recordOf(report) }, select: { restBody: true } });
  return record?.restBody ?? null;
}

/** Keeps the body of the first answer for the key, once the order it tells of is committed. */
export async function keepRestBody(ctx: ApiContext, report: IdempotencyReport, body: string): Promise<void> {
  await ctx.prisma.idempotencyRecord.updateMany({
    where: { ...recordOf(report), responseStatus: { not: null }, restBody: null },
    data: { restBody: body },
  });
}
