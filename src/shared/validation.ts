import { z } from 'zod';
import { validationError } from './errors.js';
import { exactDecimal, MONEY_MAX } from '../rules/money.js';
import { CONTROL_CHARS, CONTROL_CHARS_MESSAGE } from './text.js';

// Query parameters arrive as strings over REST and as typed values over GraphQL. These
// parsers accept both, so each rule (bounds, formats) is written once and enforced the same
// way on either interface.

/**
 * The form a parameter takes in a REST query string, for the OpenAPI document. zod can only
 * describe what a parser accepts (`number | string` for an integer, since GraphQL sends numbers
 * and REST strings); this says what the string must read as. Metadata only: parsing never reads it.
 */
export const restParamForm = z.registry<z.core.JSONSchema.BaseSchema>();

/** Registers `schema`'s REST form and returns it unchanged. */
function withRestForm<S extends z.ZodType>(schema: S, form: z.core.JSONSchema.BaseSchema): S {
  restParamForm.add(schema, form);
  return schema;
}

/**
 * What the OpenAPI document adds to zod's own JSON Schema of a schema: a rule zod checks in a
 * refinement it cannot describe (a character set, two fields not together). Unlike restParamForm
 * it is merged into zod's output, not put in its place. Metadata only: parsing never reads it.
 */
export const declaredRule = z.registry<z.core.JSONSchema.BaseSchema>();

/** Registers what `schema`'s refinement enforces, as JSON Schema, and returns it unchanged. */
export function declareRule<S extends z.ZodType>(schema: S, rule: z.core.JSONSchema.BaseSchema): S {
  declaredRule.add(schema, rule);
  return schema;
}

/** What the OpenAPI document says of an http(s) URL: an absolute one (format uri) of either scheme, without a fragment. */
export const HTTP_URL_RULE: z.core.JSONSchema.BaseSchema = { format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^#]+$' };

/** A JSON Schema pattern that matches exactly the strings holding no character of `chars` (a one-character regex such as CONTROL_CHARS). */
export function patternWithout(chars: RegExp): string {
  // A bare class negates in place ([^…]); anything else (CONTROL_CHARS_BUT_LINES' lookahead) per character.
  return /^\[[^\]]*\]$/.test(chars.source) ? `^${chars.source.replace(/^\[/, '[^')}*$` : `^(?:(?!${chars.source})[\\s\\S])*$`;
}

/** `schema` refusing every character of `chars` (CONTROL_CHARS or CONTROL_CHARS_BUT_LINES), the refusal declared as a pattern. */
export function withoutControlChars(schema: z.ZodString, chars: RegExp = CONTROL_CHARS): z.ZodString {
  return declareRule(
    schema.refine((v) => !chars.test(v), CONTROL_CHARS_MESSAGE),
    { pattern: patternWithout(chars) },
  );
}

export function intParam(min: number, max: number = Number.MAX_SAFE_INTEGER) {
  const message = max === Number.MAX_SAFE_INTEGER ? `must be an integer ≥ ${min}` : `must be an integer between ${min} and ${max}`;
  const parser = z
    .union([z.number(), z.string()], { error: message })
    .transform((v, ctx) => {
      // Only plain decimal digits without a leading zero: no sign, space, or other digit forms.
      const n = typeof v === 'number' ? v : /^(?:0|[1-9]\d{0,15})$/.test(v) ? Number(v) : Number.NaN;
      if (!Number.isSafeInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
      return n;
    });
  return withRestForm(parser, { type: 'integer', minimum: min, maximum: max });
}

/**
 * A money amount such as a price bound: an exact decimal from the text to SQL, never a binary
 * float (90.99 as a double is not the price 90.99). Its range and scale are those of a price
 * (NUMERIC(12, 2)), so every price can be named exactly and nothing else is accepted. `positive`:
 * 0 is refused too (a price, not a bound), in the same one sentence as every other refusal.
 */
export function moneyParam({ positive = false }: { positive?: boolean } = {}) {
  const max = MONEY_MAX.toFixed(2);
  const message = positive
    ? `must be a decimal number greater than 0 and at most ${max}, with at most 2 decimals`
    : `must be a decimal number from 0 to ${max} with at most 2 decimals`;
  const parser = z.unknown().transform((v, ctx) => {
    const amount = exactDecimal(v);
    if (!amount || amount.lessThan(0) || (positive && amount.isZero()) || amount.greaterThan(MONEY_MAX) || amount.decimalPlaces() > 2) {
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    // A decimal keeps no trailing zeros: 10, 10.0 and 10.00 are one filter with one kept total.
    return amount;
  });
  // Declared as the decimal text it is read as, not as a number with multipleOf 0.01: validators
  // divide binary floats (0.07 / 0.01 is 7.000000000000001), so they would refuse good prices and
  // generate bad ones. The pattern is the range and scale exactly: up to MONEY_MAX's digits, ≤ 2 decimals.
  const whole = max.indexOf('.');
  const pattern = `^${positive ? '(?!0(?:\\.0{1,2})?$)' : ''}(?:0|[1-9][0-9]{0,${whole - 1}})(?:\\.[0-9]{1,2})?$`;
  return withRestForm(parser, { type: 'string', pattern, examples: ['19.99'], description: 'A decimal as text (a JSON body may send it as a number too)' });
}

// A Map, not an object literal: a client's word must never find Object.prototype's members
// (`constructor`, `__proto__`, `toString`) as if they were values.
const BOOLEAN_WORDS = new Map([['true', true], ['false', false], ['1', true], ['0', false]]);
const BOOLEAN_MESSAGE = 'must be one of true, false, 1, 0';

export const booleanParam = withRestForm(
  z.union([z.boolean(), z.string()], { error: BOOLEAN_MESSAGE }).transform((v, ctx) => {
    if (typeof v === 'boolean') return v;
    const b = BOOLEAN_WORDS.get(v.trim().toLowerCase());
    if (b === undefined) {
      ctx.addIssue({ code: 'custom', message: BOOLEAN_MESSAGE });
      return z.NEVER;
    }
    return b;
  }),
  // A typed client sends true/false; 1 and 0 are accepted too, which the description says.
  { type: 'boolean', description: 'true or false (1 and 0 are accepted too)' },
);

export function enumParam<const T extends readonly [string, ...string[]]>(values: T) {
  const message = `must be one of ${values.join(', ')}`;
  const parser = z.string({ error: message }).transform((v, ctx) => {
    if (!(values as readonly string[]).includes(v)) {
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    return v as T[number];
  });
  return withRestForm(parser, { type: 'string', enum: [...values] });
}

/** Free text such as a search term; blank means "not given". */
export const textParam = (maxLength = 200) =>
  withRestForm(
    z
      .string({ error: 'must be a string' })
      .max(maxLength, `must be at most ${maxLength} characters`)
      .refine((v) => !CONTROL_CHARS.test(v), CONTROL_CHARS_MESSAGE)
      .transform((v) => v.trim() || undefined),
    // zod cannot express the refinement; the pattern is CONTROL_CHARS negated.
    { type: 'string', maxLength, pattern: patternWithout(CONTROL_CHARS) },
  );

/** Identifiers (ids, slugs): a bounded, URL-safe alphabet. Unknown values simply match nothing. */
const ID_MESSAGE = 'must be 1–100 letters, digits, "-" or "_"';
export const idParam = z.string({ error: ID_MESSAGE }).regex(/^[A-Za-z0-9_-]{1,100}$/, ID_MESSAGE);

/** A nested field as a client writes it: `items[1].quantity`, `shippingAddress.city`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${String(p)}`)).join('');
}

/** What zod's JSON types are called in a message: `must be ${article} ${name}`. */
const TYPE_NAMES = new Map([
  ['string', 'a string'],
  ['number', 'a number'],
  ['int', 'an integer'],
  ['boolean', 'true or false'],
  ['array', 'an array'],
  ['object', 'an object'],
  ['null', 'null'],
]);

/**
 * The message of an issue no schema worded itself. zod's own wording ("Invalid input: expected
 * string, received number") names its internals, not the rule, and never reaches a client: every
 * API input is parsed by parseInput, which puts this under each schema's own messages.
 */
function houseMessage(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'is required' : `must be ${TYPE_NAMES.get(issue.expected) ?? issue.expected}`;
    case 'too_small':
      if (issue.origin === 'string') return `must be at least ${issue.minimum} characters`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must contain at least ${issue.minimum} items`;
      return `must be ${issue.inclusive === false ? '>' : '≥'} ${issue.minimum}`;
    case 'too_big':
      if (issue.origin === 'string') return `must be at most ${issue.maximum} characters`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must contain at most ${issue.maximum} items`;
      return `must be ${issue.inclusive === false ? '<' : '≤'} ${issue.maximum}`;
    case 'invalid_value':
      return `must be ${issue.values.length === 1 ? '' : 'one of '}${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    case 'invalid_format':
      return issue.format === 'regex' ? 'is not in the accepted format' : `must be a valid ${issue.format}`;
    case 'unrecognized_keys':
      return 'is not recognised';
    default:
      return 'is not an accepted value';
  }
}

/**
 * Parses raw input with a schema; on failure throws VALIDATION_ERROR whose details name
 * every bad parameter: `{ page: "must be an integer between 1 and 2147483647", limit: "…" }`,
 * or field of a body: `{ "items[1].quantity": "…" }`.
 */
export function parseInput<S extends z.ZodType>(schema: S, raw: object, unknownKey = 'is not a recognised parameter', nullIsValue = false): z.output<S> {
  // GraphQL may pass an explicit null for an optional argument: it means "not given", except in
  // an update, where null is a value ("compareAtPrice": null clears it).
  const given = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined && (nullIsValue || v !== null)));
  const result = schema.safeParse(given, { error: houseMessage });
  if (result.success) return result.data;
  // Keyed by names the client chose (`toString`, `__proto__`): a Map, which has no inherited
  // members; Object.fromEntries then makes each one an own property, whatever its name.
  const details = new Map<string, string>();
  const note = (key: string, message: string) => details.has(key) || details.set(key, message);
  for (const issue of result.error.issues) {
    const at = fieldPath(issue.path);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) note(at ? `${at}.${key}` : key, unknownKey);
      continue;
    }
    note(at || 'input', issue.code === 'invalid_type' && valueAt(given, issue.path) === undefined ? 'is required' : issue.message);
  }
  throw validationError(Object.fromEntries(details));
}

// zod does not always carry the offending input on an issue, so "missing" is judged on the input
// itself, by own properties only: a body without `constructor` lacks it, whatever Object.prototype has.
function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

// With the u flag a surrogate pair is one code point, so only a lone surrogate matches
// (String.prototype.isWellFormed is ES2024, past what this build targets).
const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATE_ALL = /\p{Cs}/gu;

/** What a string that is not well-formed Unicode is refused with. */
export const ILL_FORMED_MESSAGE = 'is not well-formed Unicode (it holds a lone surrogate)';

/**
 * Where the first string (or object key) in a JSON value is not well-formed Unicode, as a path
 * (`items[0].name`; `''` for the value itself), or null when all are. JSON lets `"\ud800"`
 * through, and such a string cannot be stored or compared: it is refused at the edge.
 */
export function illFormedStringAt(value: unknown): string | null {
  // A loop over an explicit stack, not recursion, and each place's path is spelt only when it is
  // the one found: a hostile body may nest hundreds of thousands of levels deep.
  interface Place { item: unknown; parent: Place | null; step: string | number }
  const pathOf = (place: Place | null, last = ''): string => {
    const steps: (string | number)[] = [];
    for (let p = place; p?.parent; p = p.parent) steps.push(p.step);
    if (last) steps.unshift(last);
    return steps.reverse().reduce<string>((path, step) => (typeof step === 'number' ? `${path}[${step}]` : path ? `${path}.${step}` : step), '');
  };
  const pending: Place[] = [{ item: value, parent: null, step: '' }];
  while (pending.length) {
    const place = pending.pop()!;
    const { item } = place;
    if (typeof item === 'string') {
      if (LONE_SURROGATE.test(item)) return pathOf(place);
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) pending.push({ item: item[i], parent: place, step: i });
    } else if (item !== null && typeof item === 'object') {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, member] = entries[i]!;
        if (LONE_SURROGATE.test(key)) return pathOf(place, key.replace(LONE_SURROGATE_ALL, '\uFFFD'));
        pending.push({ item: member, parent: place, step: key });
      }
    }
  }
  return null;
}
