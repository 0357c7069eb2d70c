import type { Prisma } from '../generated/prisma/client.js';

// "CatalogChange" logs each product entering or leaving the catalogue with a copy of the
// "Product" columns that product lists filter on (prisma/migrations/*_catalog_changes).

/** The columns both tables have with one meaning: derived from the two models, never listed by hand. */
type ChangeLogColumn = Exclude<keyof Prisma.CatalogChangeWhereInput & keyof Prisma.ProductWhereInput, 'AND' | 'OR' | 'NOT' | 'id'>;

/**
 * A condition that selects both the matching products and their logged changes: only columns
 * the change log has. `{ vatCategory: … }` does not compile, as it would fail on the log.
 */
export type ListedCondition = { [K in ChangeLogColumn]?: Prisma.ProductWhereInput[K] & Prisma.CatalogChangeWhereInput[K] };
