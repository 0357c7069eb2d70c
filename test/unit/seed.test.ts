import { describe, expect, it } from 'vitest';
import { parseSeedArgs, UsageError } from '../../src/cli/seed-command.js';
import { buildDemoCatalog, buildDemoProduct } from '../../src/seed/seed.js';

// The demo data's generator and `npm run seed`'s arguments, without a database (the seeded rows
// themselves, and the command as a process: test/seed.test.ts).

describe('buildDemoProduct', () => {
  it('is a pure function of seed and index', () => {
    const catalog = buildDemoCatalog(42);
    const alone = buildDemoProduct(buildDemoCatalog(42), 1234);
    for (let i = 0; i < 50; i++) buildDemoProduct(catalog, i);
    expect(buildDemoProduct(catalog, 1234)).toEqual(alone);
    expect(buildDemoProduct(buildDemoCatalog(43), 1234).product.id).not.toBe(alone.product.id);
  });
});

describe('npm run seed arguments', () => {
  it('parses --products and --seed', () => {
    expect(parseSeedArgs([])).toEqual({ help: false, products: undefined, seed: undefined });
    expect(parseSeedArgs(['--products', '50000', '--seed=7'])).toEqual({ help: false, products: 50_000, seed: 7 });
    expect(parseSeedArgs(['--products', '0'])).toMatchObject({ products: 0 });
    expect(parseSeedArgs(['-h']).help).toBe(true);
  });

  it('rejects bad arguments', () => {
    for (const args of [['--products', '-5'], ['--products=-5'], ['--products', '1.5'], ['--products', '1e3'], ['--products', ''], ['--seed', 'abc'], ['--seed', '99999999999999999999'], ['--bogus'], ['extra'], ['--products']]) {
      expect(() => parseSeedArgs(args), args.join(' ')).toThrow(UsageError);
    }
  });
});
