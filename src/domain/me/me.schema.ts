import { ADDRESS_ORDER, PROFILE_SELECT } from '../../accounts/profile.js';
import type { Plan } from '../../context/actor.js';
import { keyCaller } from '../../context/actor.js';
import { builder } from '../../graphql/builder.js';
import { accountContactFields } from '../account-fields.js';
import { implementNode } from '../../graphql/nodes.js';
import { PLAN_LIMITS } from '../../ratelimit/plans.js';
import { keyRateLimitPolicy } from '../../ratelimit/policy.js';

// The caller's own account, as the key presenting the request sees it: `me` (REST: /api/me and
// /api/me/addresses). Any valid key may read it, whatever its scopes: it is the key holder's own data.

export const PlanRef = builder.enumType('Plan', {
  description: 'A plan of rate limits (docs/api.md, Rate limits)',
  values: Object.keys(PLAN_LIMITS) as Plan[],
});

export const AddressRef = builder.prismaObject('Address', {
  description: 'An address saved on the account, to ship orders to (`addressId` of createOrder)',
  fields: (t) => ({
    id: t.exposeID('id'),
    label: t.exposeString('label', { description: 'The account’s own name for it; may be empty' }),
    fullName: t.exposeString('fullName'),
    companyName: t.exposeString('companyName', { nullable: true }),
    phone: t.exposeString('phone'),
    email: t.exposeString('email', { nullable: true }),
    address: t.exposeString('address'),
    city: t.exposeString('city'),
    county: t.exposeString('county'),
    postalCode: t.exposeString('postalCode'),
    isDefault: t.exposeBoolean('isDefault', { description: 'At most one address of an account is the default' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

// Never the hash: what is not loaded cannot leak.
const API_KEY_SELECT = { id: true, prefix: true, name: true, plan: true, scopes: true, rateLimit: true, rateWindowSeconds: true, expiresAt: true } as const;

export const ApiKeyRef = builder.prismaObject('ApiKey', {
  description: 'An API key, as its holder may see it: never the key itself',
  select: API_KEY_SELECT,
  fields: (t) => ({
    id: t.exposeID('id'),
    prefix: t.exposeString('prefix', { description: 'The first characters of the key, to tell keys apart' }),
    name: t.exposeString('name'),
    plan: t.expose('plan', { type: PlanRef }),
    scopes: t.exposeStringList('scopes'),
    limit: t.int({ description: 'Requests allowed per window', resolve: (key) => keyRateLimitPolicy(key).limit }),
    windowSeconds: t.int({ description: 'Length of the rate-limit window', resolve: (key) => keyRateLimitPolicy(key).windowMs / 1000 }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true, description: 'Null: it does not expire' }),
  }),
});

export const MeRef = builder.prismaObject('Account', {
  variant: 'Me',
  description: 'The account behind the API key presenting the request',
  // Never the password hash: what is not loaded cannot leak.
  select: PROFILE_SELECT,
  fields: (t) => ({
    ...accountContactFields(t),
    plan: t.expose('plan', { type: PlanRef, description: 'The plan of the keys the account creates itself' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    key: t.prismaField({
      type: ApiKeyRef,
      description: 'The key presenting this request',
      resolve: (query, _account, _args, ctx) => ctx.prisma.apiKey.findUniqueOrThrow({ ...query, where: { id: keyCaller(ctx.actor).keyId } }),
    }),
    addresses: t.relation('addresses', { description: 'The saved addresses, the default first, then oldest first', query: { orderBy: ADDRESS_ORDER } }),
  }),
});

// Refetched as `me` reads them: with any valid key, the caller's own account, saved addresses and
// the key presenting the request only.
implementNode(AddressRef, {
  scopes: [],
  load: (ctx, ids) => ctx.prisma.address.findMany({ where: { id: { in: ids }, accountId: keyCaller(ctx.actor).accountId } }),
});
implementNode(ApiKeyRef, {
  scopes: [],
  load: (ctx, ids) => ctx.prisma.apiKey.findMany({ where: { id: { in: ids, equals: keyCaller(ctx.actor).keyId } }, select: API_KEY_SELECT }),
});
implementNode(MeRef, {
  scopes: [],
  load: (ctx, ids) => ctx.prisma.account.findMany({ where: { id: { in: ids, equals: keyCaller(ctx.actor).accountId } }, select: PROFILE_SELECT }),
});

builder.queryFields((t) => ({
  me: t.prismaField({
    type: MeRef,
    nullable: true,
    description: 'The account behind the API key presenting the request, and that key',
    scopes: [],
    resolve: (query, _root, _args, ctx) => ctx.prisma.account.findUnique({ ...query, where: { id: keyCaller(ctx.actor).accountId } }),
  }),
}));
