import SchemaBuilder from '@pothos/core';
import { getNamedType, graphql, isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Caller } from '../../src/context/actor.js';
import type { ApiContext } from '../../src/context/context.js';
import { fieldRulesOf, fieldRulesPlugin, withInput } from '../../src/graphql/field-rules.js';
import { schema } from '../../src/domain/schema.js';
import { deriveRoute } from '../../src/rest/derive.js';
import { restRoutes, type RestRoute } from '../../src/rest/routes.js';
import { enumParam, intParam } from '../../src/shared/validation.js';

// Who may call a field and what its arguments must be are declared once, on the field, and the
// field-rules plugin enforces them before the resolver runs; a REST route derives its scopes,
// query parameters and body from the fields its operation selects.

const ANONYMOUS: Caller = { kind: 'anonymous', ip: '192.0.2.1' };
const keyWith = (...scopes: string[]): Caller => ({
  kind: 'key',
  ip: '192.0.2.1',
  keyId: 'k',
  accountId: 'a',
  plan: 'PRO',
  scopes,
  rateLimit: null,
  rateWindowSeconds: null,
});

describe('the schema declares its scopes on its fields', () => {
  const rootFields = [schema.getQueryType()!, schema.getMutationType()!].flatMap((type) => Object.values(type.getFields()));

  it('exactly orders, stock, prices and webhooks need a key, each with its own scope, and me any key', () => {
    const declared = Object.fromEntries(rootFields.flatMap((f) => (fieldRulesOf(f).scopes ? [[f.name, fieldRulesOf(f).scopes]] : [])));
    expect(declared).toEqual({
      me: [],
      orders: ['read:orders'],
      ordersConnection: ['read:orders'],
      order: ['read:orders'],
      createOrder: ['write:orders'],
      cancelOrder: ['write:orders'],
      supplierOrders: ['read:orders'],
      supplierOrdersConnection: ['read:orders'],
      supplierOrder: ['read:orders'],
      updateOrderStatus: ['write:orders'],
      stockRecord: ['read:stock'],
      stockRecords: ['read:stock'],
      priceRecord: ['read:prices'],
      priceRecords: ['read:prices'],
      updateStock: ['write:products'],
      updatePrice: ['write:products'],
      webhookEndpoints: ['write:webhooks'],
      webhookEndpoint: ['write:webhooks'],
      webhookDeliveries: ['write:webhooks'],
      createWebhookEndpoint: ['write:webhooks'],
      deleteWebhookEndpoint: ['write:webhooks'],
      testWebhookEndpoint: ['write:webhooks'],
      enableWebhookEndpoint: ['write:webhooks'],
    });
  });

  it('exactly the supplier-side fields need the key’s account to act for a supplier', () => {
    expect(rootFields.filter((f) => fieldRulesOf(f).member).map((f) => f.name).sort()).toEqual(
      ['supplierOrders', 'supplierOrdersConnection', 'supplierOrder', 'updateOrderStatus', 'updateStock', 'updatePrice'].sort(),
    );
  });

  it('says so in each such field’s description, from the same declaration', () => {
    for (const field of rootFields) {
      const scopes = fieldRulesOf(field).scopes;
      const member = fieldRulesOf(field).member ? ', of an account acting for a supplier' : '';
      if (scopes?.length) expect(field.description).toMatch(new RegExp(`\\(scope ${scopes.join(', ')}${member}\\)$`));
      else if (scopes) expect(field.description).toMatch(/\(any API key\)$/);
      else expect(field.description ?? '').not.toMatch(/\((scope |any API key)/);
    }
  });
});

describe('REST routes derive their rules from the fields', () => {
  const derived = new Map(restRoutes.map((r) => [`${r.method} ${r.path}`, deriveRoute(r, schema)]));
  const route = (name: string) => derived.get(name)!;

  it('takes the scopes of the fields it selects, and whether they need a key at all', () => {
    expect(Object.fromEntries([...derived].filter(([, r]) => r.keyRequired).map(([name]) => [name, true]))).toEqual({
      'GET /api/orders': true,
      'POST /api/orders': true,
      'GET /api/orders/:id': true,
      'POST /api/orders/:id/cancel': true,
      'GET /api/supplier/orders': true,
      'GET /api/supplier/orders/:id': true,
      'POST /api/supplier/orders/:id/status': true,
      'GET /api/me': true,
      'GET /api/me/addresses': true,
      'GET /api/v1/stock': true,
      'GET /api/v1/prices': true,
      'PATCH /api/v1/stock/:productId': true,
      'PATCH /api/v1/prices/:productId': true,
      'POST /api/webhooks': true,
      'GET /api/webhooks': true,
      'GET /api/webhooks/:id': true,
      'DELETE /api/webhooks/:id': true,
      'POST /api/webhooks/:id/test': true,
      'POST /api/webhooks/:id/enable': true,
      'GET /api/webhooks/:id/deliveries': true,
    });
    expect(Object.fromEntries([...derived].map(([name, r]) => [name, r.scopes]))).toEqual({
      'GET /api/products': [],
      'GET /api/products/:slug': [],
      'GET /api/categories': [],
      'GET /api/categories/:slug': [],
      'GET /api/suppliers': [],
      'GET /api/suppliers/:id': [],
      'GET /api/products/:slug/reviews': [],
      'GET /api/suppliers/:id/reviews': [],
      'GET /api/orders': ['read:orders'],
      'POST /api/orders': ['write:orders'],
      'GET /api/orders/:id': ['read:orders'],
      'POST /api/orders/:id/cancel': ['write:orders'],
      'GET /api/supplier/orders': ['read:orders'],
      'GET /api/supplier/orders/:id': ['read:orders'],
      'POST /api/supplier/orders/:id/status': ['write:orders'],
      'GET /api/me': [],
      'GET /api/me/addresses': [],
      'GET /api/v1/stock': ['read:stock'],
      'GET /api/v1/prices': ['read:prices'],
      'PATCH /api/v1/stock/:productId': ['write:products'],
      'PATCH /api/v1/prices/:productId': ['write:products'],
      'POST /api/webhooks': ['write:webhooks'],
      'GET /api/webhooks': ['write:webhooks'],
      'GET /api/webhooks/:id': ['write:webhooks'],
      'DELETE /api/webhooks/:id': ['write:webhooks'],
      'POST /api/webhooks/:id/test': ['write:webhooks'],
      'POST /api/webhooks/:id/enable': ['write:webhooks'],
      'GET /api/webhooks/:id/deliveries': ['write:webhooks'],
    });
    expect(Object.fromEntries([...derived].filter(([, r]) => r.member).map(([name]) => [name, true]))).toEqual({
      'GET /api/supplier/orders': true,
      'GET /api/supplier/orders/:id': true,
      'POST /api/supplier/orders/:id/status': true,
      'PATCH /api/v1/stock/:productId': true,
      'PATCH /api/v1/prices/:productId': true,
    });
  });

  it('takes its query parameters from the fields’ input rules, plus its own switches', () => {
    expect(Object.keys(route('GET /api/products').querySchema.shape)).toEqual([
      'page',
      'limit',
      'search',
      'categoryId',
      'supplierId',
      'minPrice',
      'maxPrice',
      'featured',
      'sortBy',
    ]);
    // Two alternative fields: the record's key and the page's bounds, side by side.
    expect(Object.keys(route('GET /api/v1/stock').querySchema.shape)).toEqual(['productId', 'sku', 'page', 'limit']);
    expect(Object.keys(route('GET /api/categories').querySchema.shape)).toEqual(['page', 'limit', 'parentOnly', 'includeProducts']);
    expect(Object.keys(route('GET /api/orders/:id').querySchema.shape)).toEqual([]);
  });

  it('keeps a single field’s refinements: minPrice above maxPrice is refused before the operation runs', () => {
    expect(() => route('GET /api/products').parseQuery({ minPrice: '10', maxPrice: '5' })).toThrow(
      expect.objectContaining({ code: 'VALIDATION_ERROR', details: { maxPrice: 'must be ≥ minPrice' } }),
    );
  });

  it('turns parsed values into the operation’s variables: enums by name, exact decimals as they are', () => {
    const products = route('GET /api/products');
    const variables = products.variables(products.parseQuery({ sortBy: 'price_asc', minPrice: '90.99', limit: '5' }), {});
    expect(variables).toMatchObject({ sortBy: 'PRICE_ASC', limit: 5, page: 1 });
    expect(String(variables.minPrice)).toBe('90.99');
    const stock = route('GET /api/v1/stock');
    expect(stock.variables(stock.parseQuery({ sku: 'A-1' }), {})).toEqual({ sku: 'A-1', page: 1, limit: 12, one: true });
    expect(route('GET /api/orders/:id').variables({}, { id: 'o1' })).toEqual({ id: 'o1' });
  });

  it('takes what a path segment must be from the lookup the field declares', () => {
    const lookups = Object.fromEntries([...derived].map(([name, r]) => [name, Object.keys(r.pathSchemas)]));
    expect(lookups).toMatchObject({ 'GET /api/products/:slug': ['slug'], 'GET /api/orders/:id': ['id'], 'GET /api/suppliers/:id': ['id'], 'GET /api/categories/:slug': ['slug'] });
  });

  it('takes its body from the argument a field’s rule parses, with that rule’s wording', async () => {
    const post = route('POST /api/orders');
    expect(post.body?.variable).toBe('input');
    // Nothing in these bodies names a row to look up: the rule's database checks read nothing.
    const ctx = { actor: keyWith('write:orders'), loaders: new Map(), now: () => new Date() } as unknown as ApiContext;
    expect(() => post.body!.parse([], ctx)).toThrow(expect.objectContaining({ message: 'Invalid order', details: { body: 'must be a JSON object' } }));
    await expect(post.body!.parse({ items: [], colour: 'red' }, ctx)).rejects.toMatchObject({
      message: 'Invalid order',
      details: expect.objectContaining({ colour: 'is not a recognised field' }),
    });
  });
});

describe('the field-rules plugin, on a schema of its own', () => {
  // Only this plugin: the `prisma` option plugin-prisma's types ask of every builder is not needed.
  const builder = new SchemaBuilder<{ Context: ApiContext }>({ plugins: [fieldRulesPlugin] } as never);
  const Colour = builder.enumType('Colour', { values: { RED: { value: 'red' }, BLUE: { value: 'blue' } } });
  const pickInput = z.object({ count: intParam(1, 5).default(2), colour: enumParam(['red', 'blue']).optional() }).strict();
  let seen: unknown;
  builder.queryType({
    fields: (t) => ({
      open: t.string({ resolve: () => 'anyone' }),
      pick: t.string({
        description: 'Picks',
        args: { count: t.arg.int(), colour: t.arg({ type: Colour }) },
        scopes: ['read:stock'],
        ...withInput(pickInput, (input) => {
          seen = input;
          return `${input.count}`;
        }),
      }),
      find: t.string({
        nullable: true,
        args: { slug: t.arg.string({ required: true }) },
        lookupBy: 'slug',
        resolve: (_root, args) => {
          seen = args.slug;
          return `found ${args.slug}`;
        },
      }),
      pickPage: t.string({ args: { page: t.arg.int() }, scopes: ['read:stock'], ...withInput(z.object({ page: intParam(1, 9).default(1) }).strict(), (i) => `${i.page}`) }),
    }),
  });
  const small: GraphQLSchema = builder.toSchema();
  const run = async (caller: Caller, source: string) => {
    seen = undefined;
    const result = await graphql({ schema: small, source, contextValue: { actor: caller, loaders: new Map() } as unknown as ApiContext });
    return { data: result.data, error: result.errors?.[0] as (Error & { extensions?: Record<string, unknown> }) | undefined };
  };

  it('checks the scopes before the arguments: no key is 401, a key without the scope 403, even with bad arguments', async () => {
    const bad = '{ pick(count: 9) }';
    expect((await run(ANONYMOUS, bad)).error?.extensions).toMatchObject({ code: 'UNAUTHORIZED' });
    const forbidden = await run(keyWith('read:prices'), bad);
    expect(forbidden.error?.extensions).toMatchObject({ code: 'FORBIDDEN', details: { requiredScopes: ['read:stock'] } });
    expect((await run(keyWith('admin:all'), bad)).error?.extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { count: 'must be an integer between 1 and 5' } });
    expect(seen).toBeUndefined();
    expect((await run(ANONYMOUS, '{ open }')).data).toEqual({ open: 'anyone' });
  });

  it('hands the resolver what the rule returned: defaults applied, enum values as the rule knows them', async () => {
    expect((await run(keyWith('read:stock'), '{ pick }')).data).toEqual({ pick: '2' });
    expect(seen).toEqual({ count: 2 });
    await run(keyWith('read:stock'), '{ pick(count: 4, colour: BLUE) }');
    expect(seen).toEqual({ count: 4, colour: 'blue' });
  });

  it('answers a lookup by a value that cannot be a slug with null, without running the resolver', async () => {
    expect((await run(ANONYMOUS, '{ find(slug: "no such/slug") }')).data).toEqual({ find: null });
    expect(seen).toBeUndefined();
    expect((await run(ANONYMOUS, '{ find(slug: "some-slug") }')).data).toEqual({ find: 'found some-slug' });
  });

  it('appends the scopes to the description and derives a route from them', () => {
    expect(small.getQueryType()!.getFields().pick!.description).toBe('Picks (scope read:stock)');
    const route: RestRoute = {
      method: 'GET',
      path: '/api/pick',
      document: 'query P($count: Int, $colour: Colour, $page: Int) { pick(count: $count, colour: $colour) pickPage(page: $page) }',
      shape: { kind: 'one', field: 'pick' },
      docs: { tag: 'T', summary: 'S' },
    };
    const derived = deriveRoute(route, small);
    expect(derived.scopes).toEqual(['read:stock']);
    expect(Object.keys(derived.querySchema.shape)).toEqual(['count', 'colour', 'page']);
    expect(derived.variables(derived.parseQuery({ colour: 'red' }), {})).toEqual({ count: 2, colour: 'RED', page: 1 });
    expect(() => derived.parseQuery({ shade: 'red' })).toThrow(expect.objectContaining({ details: { shade: 'is not a recognised parameter' } }));
  });
});

describe('fields that reach orders', () => {
  it('offers no GraphQL path to orders other than the caller-scoped and supplier-scoped fields', () => {
    const paths: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name.startsWith('__') || !(isObjectType(type) || isInterfaceType(type))) continue;
      for (const field of Object.values(type.getFields())) {
        const target = getNamedType(field.type).name;
        if (['Order', 'OrderItem', 'OrderList', 'Buyer', 'ShippingAddress'].includes(target)) paths.push(`${type.name}.${field.name}`);
      }
    }
    expect(paths.sort()).toEqual([
      'Mutation.cancelOrder',
      'Mutation.createOrder',
      'Mutation.updateOrderStatus',
      'Order.buyer',
      'Order.items',
      'Order.shippingAddress',
      // The caller's own orders, or its supplier's, as a subscription event (test/subscriptions.test.ts).
      'OrderEvent.order',
      'OrderList.items',
      'Query.order',
      'Query.orders',
      'Query.supplierOrder',
      'Query.supplierOrders',
      // The connections beside orders and supplierOrders, under the same rules (test/relay.test.ts).
      // (node(id:)/nodes(ids:) answer the Node interface: an order through them is order(id:)'s rule.)
      'QueryOrdersConnectionEdge.node',
      'QuerySupplierOrdersConnectionEdge.node',
    ]);
  });
});
