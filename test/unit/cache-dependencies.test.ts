import { isObjectType, Kind, parse, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { ANY_PRODUCT_ROW, dependenciesOf, tagsOf, TYPE_READS } from '../../src/cache/dependencies.js';
import { createChangeKnowledge } from '../../src/cache/freshness.js';
import { createResponseCache, type AnswerParts } from '../../src/cache/response-cache.js';
import { schema } from '../../src/domain/schema.js';
import { restRoutes } from '../../src/rest/routes.js';
import { deriveRoute } from '../../src/rest/derive.js';

// The response cache's rules, without a database: what an operation's answers depend on, when a
// kept answer is fresh, and what a change drops.

const operationOf = (source: string) => {
  const document = parse(source);
  return { document, operation: document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)! };
};
const deps = (source: string) => {
  const { document, operation } = operationOf(source);
  return dependenciesOf(schema, document, operation);
};

describe('what an answer depends on', () => {
  it('knows what every object type of the schema reads (a new type must say)', () => {
    const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].map((t) => t?.name));
    const objects = Object.values(schema.getTypeMap()).filter((t) => isObjectType(t) && !t.name.startsWith('__') && !roots.has(t.name));
    expect(objects.map((t) => t.name).filter((name) => !(name in TYPE_READS))).toEqual([]);
  });

  it('derives every cacheable REST route’s dependencies', () => {
    for (const route of restRoutes.filter((r) => r.method === 'GET')) {
      const derived = deriveRoute(route, schema);
      if (!derived.cacheable) continue;
      const operation = derived.operation.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
      expect(dependenciesOf(schema, derived.operation, operation), route.path).not.toBeNull();
    }
  });

  it('a product page depends on the product tables and that product’s stock', () => {
    const d = deps(`{ product(slug: "x") { id name stock supplier { companyName } category { name } } }`)!;
    expect(d.tables).toEqual(['Category', 'Product', 'Review', 'Supplier']);
    expect(tagsOf(d, { product: { id: 'p1', name: 'n', stock: 3 } }, undefined).sort()).toEqual(['Category', 'Product', 'Product:p1', 'Review', 'Supplier']);
  });

  it('a list depends on each product it shows, found through aliases and fragments', () => {
    const d = deps(`{ products(limit: 2) { items { ...P } } } fragment P on Product { key: id stock }`)!;
    const tags = tagsOf(d, { products: { items: [{ key: 'a', stock: 1 }, { key: 'b', stock: 2 }] } }, undefined);
    expect(tags).toContain('Product:a');
    expect(tags).toContain('Product:b');
    expect(tags).not.toContain(ANY_PRODUCT_ROW);
  });

  it('products shown with their stock but not their id depend on every product’s stock', () => {
    const tags = tagsOf(deps(`{ products { items { stock } } }`)!, { products: { items: [{ stock: 1 }] } }, undefined);
    expect(tags).toContain(ANY_PRODUCT_ROW);
  });

  it('products shown without anything that changes per product depend on no product’s stock', () => {
    const tags = tagsOf(deps(`{ categories { items { name products(limit: 4) { id name price } } } }`)!, { categories: { items: [{ name: 'c', products: [{ id: 'p', name: 'n', price: 1 }] }] } }, undefined);
    expect(tags.filter((t) => t.startsWith('Product:'))).toEqual([]);
  });

  it('a key’s answer depends on its account’s view; an anonymous one on none', () => {
    const d = deps(`{ me { name } }`)!;
    expect(tagsOf(d, { me: { name: 'x' } }, { kind: 'key', ip: '', keyId: 'k', accountId: 'acc1', plan: 'PRO', scopes: [], rateLimit: null, rateWindowSeconds: null })).toEqual(['account:acc1']);
    expect(tagsOf(d, { me: { name: 'x' } }, { kind: 'anonymous', ip: '' })).toEqual([]);
    expect(tagsOf(deps(`{ categories { items { name } } }`)!, {}, undefined)).toEqual(['Category', 'Product']);
  });

  it('an operation over an abstract type cannot be told, and is not kept', () => {
    expect(deps(`{ node(id: "x") { id } }`)).toBeNull();
  });
});

describe('freshness', () => {
  it('a kept answer is fresh until one of its tags changes after it was made', () => {
    const k = createChangeKnowledge();
    k.learn({ revision: 10, changesFrom: 0, changes: null });
    expect(k.fresh(['Product:a', 'Category'], 10)).toBe(true);
    k.learn({ revision: 12, changesFrom: 0, changes: [[11, 'Product:b'], [12, 'account:x']] });
    expect(k.fresh(['Product:a', 'Category'], 10)).toBe(true);
    expect(k.fresh(['Product:b'], 10)).toBe(false);
    expect(k.fresh(['Product:b'], 11)).toBe(true);
    expect(k.fresh(['account:x'], 11)).toBe(false);
  });

  it('answers made before this process started counting are not trusted', () => {
    const k = createChangeKnowledge();
    k.learn({ revision: 10, changesFrom: 0, changes: null });
    expect(k.fresh([], 9)).toBe(false);
    expect(k.fresh([], 11)).toBe(true);
  });

  it('starts over when the changes it missed were pruned, or on a TRUNCATE', () => {
    const k = createChangeKnowledge();
    let resets = 0;
    k.onReset(() => resets++);
    k.learn({ revision: 10, changesFrom: 0, changes: null });
    k.learn({ revision: 50, changesFrom: 20, changes: null });
    expect(resets).toBe(2);
    expect(k.fresh([], 49)).toBe(false);
    k.learn({ revision: 51, changesFrom: 20, changes: [[51, '*']] });
    expect(resets).toBe(3);
    expect(k.fresh([], 50)).toBe(false);
  });

  it('a replica behind what is known teaches nothing, and forgets nothing', () => {
    const k = createChangeKnowledge();
    k.learn({ revision: 10, changesFrom: 0, changes: null });
    k.learn({ revision: 12, changesFrom: 0, changes: [[12, 'Product:b']] });
    k.learn({ revision: 11, changesFrom: 0, changes: [] });
    expect(k.since()).toBe(12);
    expect(k.fresh(['Product:b'], 11)).toBe(false);
  });

  it('tells listeners which tags changed, once each', () => {
    const k = createChangeKnowledge();
    const heard: string[][] = [];
    k.onChange((tags) => heard.push([...tags].sort()));
    k.learn({ revision: 1, changesFrom: 0, changes: null });
    k.learn({ revision: 3, changesFrom: 0, changes: [[2, 'A'], [3, 'B'], [3, 'A']] });
    k.learn({ revision: 3, changesFrom: 0, changes: [[2, 'A']] });
    expect(heard).toEqual([['A', 'B']]);
  });
});

describe('the memory store', () => {
  /** A cache over a revision source the test moves by hand. */
  function cacheWith(maxBytes = 1 << 20) {
    const knowledge = createChangeKnowledge();
    let revision = 1;
    let changes: [number, string][] | null = null;
    const source = {
      current: async () => {
        knowledge.learn({ revision, changesFrom: 0, changes });
        changes = [];
        return revision;
      },
      close: async () => undefined,
    };
    let dropped = 0;
    const cache = createResponseCache({
      revision: source,
      knowledge,
      maxBytes,
      events: { hit: () => undefined, miss: () => undefined, invalidated: (n) => (dropped += n), storeError: () => undefined },
    });
    const write = (...tags: string[]) => {
      revision++;
      changes = tags.map((tag) => [revision, tag]);
    };
    return { cache, write, dropped: () => dropped };
  }
  const parts = (operation: string): AnswerParts => ({ face: 'rest', operation, variables: '[]', caller: undefined });

  it('answers again until a tag it read changes, then drops it', async () => {
    const { cache, write, dropped } = cacheWith();
    (await cache.lookup(parts('a')))!.keep({ status: 200, body: 'A' }, ['Product:a']);
    (await cache.lookup(parts('b')))!.keep({ status: 200, body: 'B' }, ['Product:b']);
    expect((await cache.lookup(parts('a')))!.hit?.body).toBe('A');
    write('Product:a');
    expect((await cache.lookup(parts('a')))!.hit).toBeUndefined();
    expect((await cache.lookup(parts('b')))!.hit?.body).toBe('B');
    expect(dropped()).toBe(1);
  });

  it('an answer made before a change it read is not kept as fresh', async () => {
    const { cache, write } = cacheWith();
    const lookup = (await cache.lookup(parts('a')))!;
    write('Product:a');
    lookup.keep({ status: 200, body: 'old' }, ['Product:a']);
    expect((await cache.lookup(parts('a')))!.hit).toBeUndefined();
  });

  it('stays within its bound, the least recently used first', async () => {
    const { cache } = cacheWith(4000);
    const body = 'x'.repeat(500);
    for (const name of ['a', 'b', 'c']) (await cache.lookup(parts(name)))!.keep({ status: 200, body }, ['T']);
    await cache.lookup(parts('a'));
    (await cache.lookup(parts('d')))!.keep({ status: 200, body }, ['T']);
    expect((await cache.lookup(parts('a')))!.hit).toBeDefined();
    expect((await cache.lookup(parts('b')))!.hit).toBeUndefined();
    expect((await cache.lookup(parts('d')))!.hit).toBeDefined();
  });
});
