import { z } from 'zod';
import { validationError } from './errors.js';

// Query parameters arrive as strings over REST and as typed values over GraphQL. These
// parsers accept both, so each rule (bounds, formats) is written once and enforced the same
// way on either interface.

// PostgreSQL rejects NUL in text and control characters are never meaningful in a filter.
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

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

export function intParam(min: number, max: number = Number.MAX_SAFE_INTEGER) {
  const message = max === Number.MAX_SAFE_INTEGER ? `must be an integer ≥ ${min}` : `must be an integer between ${min} and ${max}`;
  const parser = z
    .union([z.number(), z.string()])
    .transform((v, ctx) => {
      const n = typeof v === 'number' ? v : /^[+-]?\d{1,16}$/.test(v.trim()) ? Number(v.trim()) : Number.NaN;
      if (!Number.isSafeInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
      return n;
    });
  return withRestForm(parser, { type: 'integer', minimum: min, maximum: max });
}

export function decimalParam(min = 0) {
  const message = `must be a number ≥ ${min}`;
  const parser = z.union([z.number(), z.string()]).transform((v, ctx) => {
    const n = typeof v === 'number' ? v : /^[+-]?(\d{1,12}(\.\d*)?|\.\d+)$/.test(v.trim()) ? Number(v.trim()) : Number.NaN;
    if (!Number.isFinite(n) || n < min || n > 1e12) {
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    return n;
  });
  // A string has at most 12 digits before the point, so REST never reaches 1e12.
  return withRestForm(parser, { type: 'number', minimum: min, exclusiveMaximum: 1e12 });
}

const BOOLEAN_WORDS: Record<string, boolean> = { true: true, false: false, '1': true, '0': false };

export const booleanParam = withRestForm(
  z.union([z.boolean(), z.string()]).transform((v, ctx) => {
    if (typeof v === 'boolean') return v;
    const b = BOOLEAN_WORDS[v.trim().toLowerCase()];
    if (b === undefined) {
      ctx.addIssue({ code: 'custom', message: 'must be one of true, false, 1, 0' });
      return z.NEVER;
    }
    return b;
  }),
  // A typed client sends true/false; 1 and 0 are accepted too, which the description says.
  { type: 'boolean', description: 'true or false (1 and 0 are accepted too)' },
);

export function enumParam<const T extends readonly [string, ...string[]]>(values: T) {
  const parser = z.string().transform((v, ctx) => {
    if (!(values as readonly string[]).includes(v)) {
      ctx.addIssue({ code: 'custom', message: `must be one of ${values.join(', ')}` });
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
      .string()
      .max(maxLength, `must be at most ${maxLength} characters`)
      .refine((v) => !CONTROL_CHARS.test(v), 'must not contain control characters')
      .transform((v) => v.trim() || undefined),
    // zod cannot express the refinement; the pattern is CONTROL_CHARS negated.
    { type: 'string', maxLength, pattern: `^${CONTROL_CHARS.source.replace(/^\[/, '[^')}*$` },
  );

/** Identifiers (ids, slugs): a bounded, URL-safe alphabet. Unknown values simply match nothing. */
export const idParam = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be 1–100 letters, digits, "-" or "_"');

/** A nested field as a client writes it: `items[1].quantity`, `shippingAddress.city`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${String(p)}`)).join('');
}

/**
 * Parses raw input with a schema; on failure throws VALIDATION_ERROR whose details name
 * every bad parameter: `{ page: "must be an integer between 1 and 2147483647", limit: "…" }`,
 * or field of a body: `{ "items[1].quantity": "…" }`.
 */
export function parseInput<S extends z.ZodType>(schema: S, raw: object, unknownKey = 'is not a recognised parameter'): z.output<S> {
  // GraphQL may pass an explicit null for an optional argument: it means "not given".
  const given = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== null && v !== undefined));
  const result = schema.safeParse(given);
  if (result.success) return result.data;
  const details: Record<string, string> = {};
  for (const issue of result.error.issues) {
    const at = fieldPath(issue.path);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) details[at ? `${at}.${key}` : key] ??= unknownKey;
      continue;
    }
    const key = at || 'input';
    details[key] ??= issue.code === 'invalid_type' && valueAt(given, issue.path) === undefined ? 'is required' : issue.message;
  }
  throw validationError(details);
}

// zod does not always carry the offending input on an issue, so "missing" is judged on the input itself.
function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}
