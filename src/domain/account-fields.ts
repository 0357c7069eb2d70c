import type { builder } from '../graphql/builder.js';
import type PrismaTypes from '../generated/pothos-prisma-types.js';

// Who an account is and how to reach it, declared once for both GraphQL types of an Account: the
// caller's own (Me, src/domain/me/me.schema.ts) and an order's buyer (Buyer, src/domain/orders/orders.schema.ts).
// This file registers no type itself, so importing it leaves the order types are built in unchanged.

type Types = typeof builder.$inferSchemaTypes;

/** What of an Account type's field builder they use, whatever columns the type selects (its `Shape`). */
type AccountFieldBuilder<Shape extends object> = Pick<PothosSchemaTypes.PrismaObjectFieldBuilder<Types, PrismaTypes['Account'], Shape>, 'exposeID' | 'exposeString'>;

/** id, email, name, companyName and phone, each exposed as its column. */
export const accountContactFields = <Shape extends object>(t: AccountFieldBuilder<Shape>) => ({
  id: t.exposeID('id'),
  email: t.exposeString('email'),
  name: t.exposeString('name'),
  companyName: t.exposeString('companyName', { nullable: true }),
  phone: t.exposeString('phone', { nullable: true }),
});
