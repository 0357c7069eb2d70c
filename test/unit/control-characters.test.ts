import { describe, expect, it } from 'vitest';
import { recordKeyInput } from '../../src/domain/inventory/inventory.service.js';
import { cancelOrderInput } from '../../src/domain/orders/lifecycle.js';
import { createOrderInput } from '../../src/domain/orders/orders.service.js';
import { endpointInput } from '../../src/domain/webhooks/webhooks.service.js';
import { checkEmail, CONTROL_CHARS, CONTROL_CHARS_BUT_LINES, CONTROL_CHARS_MESSAGE, CONTROL_CHARS_WITH_C1, nameProblem } from '../../src/shared/text.js';
import { textParam } from '../../src/shared/validation.js';

// The control-character rules (src/shared/text.ts): three sets, each exactly what it says, at
// their edges, and each applied where its kind of text is read.

const code = (char: string) => `U+${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

/** Whether each rule refuses `char`: [CONTROL_CHARS, CONTROL_CHARS_BUT_LINES, CONTROL_CHARS_WITH_C1]. */
const EDGES: Array<[string, boolean, boolean, boolean]> = [
  ['\u0000', true, true, true],
  ['\t', true, false, true],
  ['\n', true, false, true],
  ['\u000b', true, true, true],
  ['\u000c', true, true, true],
  ['\r', true, false, true],
  ['\u001f', true, true, true],
  [' ', false, false, false],
  ['~', false, false, false],
  ['\u007f', true, true, true],
  ['\u0080', false, false, true],
  ['\u0085', false, false, true],
  ['\u009f', false, false, true],
  ['\u00a0', false, false, false],
  ['\u2028', false, false, false],
];

describe('the control-character rules', () => {
  it.each(EDGES.map(([char, ...refused]) => [code(char), char, ...refused] as const))('at %s', (_code, char, plain, butLines, withC1) => {
    expect([CONTROL_CHARS.test(`a${char}b`), CONTROL_CHARS_BUT_LINES.test(`a${char}b`), CONTROL_CHARS_WITH_C1.test(`a${char}b`)]).toEqual([plain, butLines, withC1]);
  });

  it('are C0 and DEL; the same but tab, line feed and carriage return; and every Cc, C1 included', () => {
    const c0AndDel = (c: number) => c <= 0x1f || c === 0x7f;
    const expected: Array<[RegExp, (c: number) => boolean]> = [
      [CONTROL_CHARS, c0AndDel],
      [CONTROL_CHARS_BUT_LINES, (c) => c0AndDel(c) && ![0x09, 0x0a, 0x0d].includes(c)],
      [CONTROL_CHARS_WITH_C1, (c) => c0AndDel(c) || (c >= 0x80 && c <= 0x9f)],
    ];
    for (const [rule, refuses] of expected) {
      const wrong: string[] = [];
      for (let c = 0; c <= 0xffff; c++) if (rule.test(String.fromCharCode(c)) !== refuses(c)) wrong.push(code(String.fromCharCode(c)));
      expect(wrong, rule.source).toEqual([]);
    }
  });

  it('keep C0 and DEL out of one-line values, and let C1 through', () => {
    const refusal = (parsed: { success: boolean; error?: { issues: Array<{ message: string }> } }) =>
      parsed.success ? null : parsed.error!.issues.map((issue) => issue.message);
    const order = (extra: object) => ({ supplierId: 's', items: [{ productId: 'p', quantity: 1 }], ...extra });
    const oneLine = {
      'a search term': (v: string) => textParam().safeParse(v),
      'a coupon code': (v: string) => createOrderInput.safeParse(order({ couponCode: v })),
      'a SKU': (v: string) => recordKeyInput.safeParse({ sku: v }),
      'an endpoint description': (v: string) => endpointInput.safeParse({ url: 'https://example.com/hook', events: ['order.created'], description: v }),
    };
    for (const [what, parse] of Object.entries(oneLine)) {
      for (const char of ['\t', '\n', '\u001f', '\u007f']) expect(refusal(parse(`a${char}b`)), `${what} with ${code(char)}`).toEqual([CONTROL_CHARS_MESSAGE]);
      for (const char of [' ', '\u0080', '\u009f', '\u00a0']) expect(refusal(parse(`a${char}b`)), `${what} with ${code(char)}`).toBeNull();
    }
  });

  it('let notes span lines, nothing else', () => {
    const notes = {
      'an order’s notes': (v: string) => createOrderInput.safeParse({ supplierId: 's', items: [{ productId: 'p', quantity: 1 }], notes: v }).success,
      'a cancellation’s reason': (v: string) => cancelOrderInput.safeParse({ id: 'o1', reason: v }).success,
    };
    for (const [what, accepts] of Object.entries(notes)) {
      for (const char of ['\t', '\n', '\r', ' ', '\u0085', '\u00a0']) expect(accepts(`a${char}b`), `${what} with ${code(char)}`).toBe(true);
      for (const char of ['\u0000', '\u000b', '\u000c', '\u001f', '\u007f']) expect(accepts(`a${char}b`), `${what} with ${code(char)}`).toBe(false);
    }
  });

  it('keep every control character, C1 included, out of names and e-mail addresses', () => {
    for (const char of ['\t', '\u001f', '\u007f', '\u0080', '\u0085', '\u009f']) {
      expect(nameProblem(`Ana${char}Pop`), code(char)).toBe(CONTROL_CHARS_MESSAGE);
      expect(checkEmail(`ana${char}@example.com`), code(char)).toEqual({ problem: expect.stringMatching(/^must not contain invisible/) });
    }
    expect(nameProblem('Ana\u00a0Pop')).toBeNull();
    expect(nameProblem('Ana Pop')).toBeNull();
  });
});
