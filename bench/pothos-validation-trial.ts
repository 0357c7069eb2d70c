import { parseArgs } from 'node:util';
import SchemaBuilder from '@pothos/core';
import ValidationPlugin from '@pothos/plugin-validation';
import ZodPlugin from '@pothos/plugin-zod';
import { execute, parse, type GraphQLSchema } from 'graphql';
import type { z } from 'zod';
import type { Caller } from '../src/context/actor.js';
import type { ApiContext } from '../src/context/context.js';
import { fieldRulesPlugin, withInput } from '../src/graphql/field-rules.js';
import { orderStatuses, createOrderRule, orderListInput } from '../src/domain/orders/orders.service.js';
import { productFilterInput } from '../src/domain/products/products.service.js';
import { validationError } from '../src/shared/errors.js';
import { fieldPath } from '../src/shared/validation.js';

// `npx tsx bench/pothos-validation-trial.ts [--runs 20000]`
//
// The argument rules of two fields, as the field-rules plugin applies them (`input`, through
// withInput) and as the Pothos validation plugin (`validate`, standard schema) and zod plugin
// (`validate: { schema }`) would, on three small schemas built the same way otherwise: the same
// zod rules of the service (orders' list arguments, createOrder's input), the same scopes (the
// field-rules plugin's `scopes`, listed first so that its check wraps the resolver), and each
// plugin's validationError turning zod's issues into the service's VALIDATION_ERROR with details
// by path (`items[0].quantity`), as parseInput does. Prints what each answers to the same
// requests, where they differ from the field rules, then the CPU time per execution of a valid
// request. (The validation plugin runs its checks as argument mappers, which Pothos calls before
// every plugin's resolver wrapper, whatever the order of the plugins: no plugin's scope check can
// come first.)

const { values: options } = parseArgs({ options: { runs: { type: 'string', default: '20000' } } });
const runs = Number(options.runs);
if (!(Number.isInteger(runs) && runs >= 100)) throw new RangeError('--runs must be an integer ≥ 100');

const key = (...scopes: string[]): Caller => ({ kind: 'key', ip: '192.0.2.1', keyId: 'k', accountId: 'a', plan: 'PRO', scopes, rateLimit: null, rateWindowSeconds: null });
const ANONYMOUS: Caller = { kind: 'anonymous', ip: '192.0.2.1' };

type Builder = PothosSchemaTypes.SchemaBuilder<PothosSchemaTypes.ExtendDefaultTypes<{ Context: ApiContext }>>;
let seen: unknown;

/**
 * The same types on each builder: `rule` attaches a field's rule over all its arguments and its
 * resolver, `argumentRule` a rule over one argument (createOrder's input) the way each plugin takes it.
 */
interface Attach {
  rule: (schema: z.ZodObject) => object;
  argumentRule: { onArgument: object; onField: object };
}

function build(builder: Builder, { rule, argumentRule }: Attach): GraphQLSchema {
  const Status = builder.enumType('OrderStatus', { values: orderStatuses });
  const Item = builder.inputType('OrderItemInput', {
    fields: (t) => ({ productId: t.id({ required: true }), quantity: t.int({ required: true }), variantId: t.id() }),
  });
  const Input = builder.inputType('CreateOrderInput', {
    fields: (t) => ({ supplierId: t.id({ required: true }), items: t.field({ type: [Item], required: true }), notes: t.string(), couponCode: t.string() }),
  });
  builder.queryType({
    fields: (t) => ({
      orders: t.string({
        nullable: true,
        args: { page: t.arg.int(), limit: t.arg.int(), status: t.arg({ type: Status }) },
        scopes: ['read:orders'],
        ...rule(orderListInput),
      } as never),
      // A connection: its rule is the filters' (as REST's), the list arguments are the connection's.
      productsConnection: t.string({
        nullable: true,
        args: { first: t.arg.int(), after: t.arg.string(), search: t.arg.string() },
        ...rule(productFilterInput as unknown as z.ZodObject),
      } as never),
    }),
  });
  builder.mutationType({
    fields: (t) => ({
      createOrder: t.string({
        nullable: true,
        args: { input: t.arg({ type: Input, required: true, ...argumentRule.onArgument } as never) },
        scopes: ['write:orders'],
        ...argumentRule.onField,
      } as never),
    }),
  });
  return builder.toSchema();
}

const record = (input: unknown) => {
  seen = input;
  return 'ok';
};

type Issue = { path?: readonly (PropertyKey | { key: PropertyKey })[]; message: string; code?: string; keys?: string[] };

/**
 * zod's issues as the service's VALIDATION_ERROR, the way parseInput words them: details by path,
 * the first issue of each, unknown members by name; a path inside createOrder's `input` argument
 * named from inside it (`items[0].quantity`), and that field's own message when the plugin says
 * which field failed (`field`).
 */
function asServiceError(issues: readonly Issue[], field?: string) {
  const details: Record<string, string> = {};
  for (const issue of issues) {
    const path = (issue.path ?? []).map((p) => (typeof p === 'object' && p !== null ? p.key : p));
    const at = fieldPath(path[0] === 'input' ? path.slice(1) : path);
    if (issue.code === 'unrecognized_keys') for (const k of issue.keys ?? []) details[at ? `${at}.${k}` : k] ??= 'is not a recognised parameter';
    else details[at || 'input'] ??= issue.message;
  }
  return validationError(details, field === 'createOrder' ? createOrderRule.message : undefined);
}

const resolveInput = { resolve: (_: unknown, args: Record<string, unknown>) => record(args.input) };

const rulesPlugin = build(new SchemaBuilder<{ Context: ApiContext }>({ plugins: [fieldRulesPlugin] } as never) as never, {
  rule: (schema) => withInput(schema, record),
  argumentRule: { onArgument: {}, onField: withInput(createOrderRule, record) },
});

// Its validationError is told the issues, the arguments and the context, not which field failed.
const validationPlugin = build(
  new SchemaBuilder<{ Context: ApiContext }>({
    plugins: [fieldRulesPlugin, ValidationPlugin],
    validation: { validationError: (failure: { issues: readonly Issue[] }) => asServiceError(failure.issues) },
  } as never) as never,
  {
    rule: (schema) => ({ validate: schema, resolve: (_: unknown, args: unknown) => record(args) }),
    argumentRule: { onArgument: { validate: createOrderRule.schema }, onField: resolveInput },
  },
);

// Listed after the field rules, so that their scope check wraps its validation.
const zodPlugin = build(
  new SchemaBuilder<{ Context: ApiContext }>({
    plugins: [fieldRulesPlugin, ZodPlugin],
    zod: { validationError: (error: { issues: readonly Issue[] }, _args: unknown, _ctx: unknown, info: { fieldName: string }) => asServiceError(error.issues, info.fieldName) },
  } as never) as never,
  {
    rule: (schema) => ({ validate: { schema }, resolve: (_: unknown, args: unknown) => record(args) }),
    argumentRule: { onArgument: { validate: { schema: createOrderRule.schema } }, onField: resolveInput },
  },
);

interface Case {
  name: string;
  caller: Caller;
  source: string;
}

const CASES: Case[] = [
  { name: 'no key, bad arguments', caller: ANONYMOUS, source: '{ orders(page: 0, limit: 500) }' },
  { name: 'key without the scope, bad arguments', caller: key('read:stock'), source: '{ orders(page: 0, limit: 500) }' },
  { name: 'two bad arguments at once', caller: key('read:orders'), source: '{ orders(page: 0, limit: 500) }' },
  { name: 'defaults applied, enum value as the rule gives it', caller: key('read:orders'), source: '{ orders(status: SHIPPED) }' },
  { name: 'a connection: its list arguments beside the filters\' rule', caller: ANONYMOUS, source: '{ productsConnection(first: 5, search: " cable ") }' },
  { name: 'an explicit null means "not given"', caller: key('read:orders'), source: '{ orders(page: null, limit: 5) }' },
  {
    name: 'an input object: paths inside it, its own wording',
    caller: key('write:orders'),
    source: 'mutation { createOrder(input: { supplierId: "s/1", items: [{ productId: "p1", quantity: 0 }, { productId: "p1", quantity: 1 }] }) }',
  },
  { name: 'an input object: a valid one reaches the resolver', caller: key('write:orders'), source: 'mutation { createOrder(input: { supplierId: "s1", items: [{ productId: "p1", quantity: 2 }] }) }' },
];

async function answer(schema: GraphQLSchema, c: Case) {
  seen = undefined;
  const result = await execute({ schema, document: parse(c.source), contextValue: { actor: c.caller, loaders: new Map() } });
  const error = result.errors?.[0];
  return JSON.stringify(
    error ? { code: error.extensions?.code ?? null, message: error.message, details: error.extensions?.details ?? null } : { data: result.data, resolverReceived: seen },
  );
}

const impls: [string, GraphQLSchema][] = [
  ['field rules (hand-written)', rulesPlugin],
  ['plugin-validation 4.3.1', validationPlugin],
  ['plugin-zod 4.3.2', zodPlugin],
];

for (const c of CASES) {
  process.stdout.write(`\n${c.name}: ${c.source}\n`);
  const expected = await answer(rulesPlugin, c);
  for (const [name, schema] of impls) {
    const got = await answer(schema, c);
    process.stdout.write(`  ${got === expected ? '  ' : '≠ '}${name}: ${got}\n`);
  }
}

process.stdout.write(`\nCPU per execution of '{ orders(page: 2, limit: 20, status: SHIPPED) }' with a key, ${runs} executions, 5 rounds alternating (median):\n`);
const document = parse('{ orders(page: 2, limit: 20, status: SHIPPED) }');
const contextValue = () => ({ actor: key('read:orders'), loaders: new Map() });
const cpu = new Map<string, number[]>(impls.map(([name]) => [name, []]));
for (let round = 0; round < 5; round++) {
  for (const [name, schema] of round % 2 ? [...impls].reverse() : impls) {
    for (let i = 0; i < 2000; i++) await execute({ schema, document, contextValue: contextValue() });
    const before = process.cpuUsage();
    for (let i = 0; i < runs; i++) await execute({ schema, document, contextValue: contextValue() });
    const used = process.cpuUsage(before);
    cpu.get(name)!.push((used.user + used.system) / runs);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const base = median(cpu.get(impls[0]![0])!);
for (const [name] of impls) process.stdout.write(`  ${name}: ${median(cpu.get(name)!).toFixed(2)} µs (${(median(cpu.get(name)!) / base).toFixed(2)}×)\n`);
