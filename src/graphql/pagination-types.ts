import { builder } from './builder.js';
import { LIMIT_DEFAULT, LIMIT_MAX, PAGE_DEFAULT, paginationMeta, type PageInput, type PaginationMeta } from '../shared/pagination.js';

export const PaginationMetaRef = builder.objectRef<PaginationMeta>('PaginationMeta').implement({
  description: 'Offset pagination of a list: the same object as `meta` in the REST envelope.',
  fields: (t) => ({
    page: t.exposeInt('page'),
    limit: t.exposeInt('limit'),
    total: t.exposeInt('total'),
    totalPages: t.exposeInt('totalPages'),
  }),
});

/** `page` and `limit` arguments of every offset-paginated list. */
export const pageArgs = builder.args((t) => ({
  page: t.int({ required: false, description: `Page number, ≥ 1 (default ${PAGE_DEFAULT})` }),
  limit: t.int({ required: false, description: `Items per page, 1–${LIMIT_MAX} (default ${LIMIT_DEFAULT})` }),
}));

/**
 * The `limit` of a nested list (a relation or a sample), with its default. Validated 1–LIMIT_MAX
 * by the builder (src/graphql/field-rules.ts), never clamped; an explicit null means "not given".
 */
export const listLimitArgs = (defaultValue: number) =>
  builder.args((t) => ({ limit: t.int({ required: false, defaultValue, description: `At most this many, 1–${LIMIT_MAX}` }) }));

export const metaFor = (page: PageInput, total: Promise<number>) => total.then((n) => paginationMeta(page, n));

/** A GraphQL enum of a list's sort keys: REST's `price_asc` is GraphQL's `PRICE_ASC`. */
export function sortEnum<const V extends readonly string[]>(name: string, values: V) {
  return builder.enumType(name, {
    values: Object.fromEntries(values.map((v) => [v.toUpperCase(), { value: v }])) as Record<Uppercase<V[number]>, { value: V[number] }>,
  });
}
