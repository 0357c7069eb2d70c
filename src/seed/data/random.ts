import { createHash } from 'node:crypto';

// Every seeded row derives from a SHA-256 of (seed, kind, key): the digest gives both the row's
// id and the state of the random stream that fills it. A row is therefore a pure function of
// its key, independent of batch sizes, of the order of generation and of rows seeded before it,
// which is what lets a top-up run produce exactly the rows a single larger run would have.

const BASE36 = '0123456789abcdefghijklmnopqrstuvwxyz';

export function seedDigest(seed: number, kind: string, key: string | number): Buffer {
  return createHash('sha256').update(`${seed}/${kind}/${key}`).digest();
}

/**
 * A cuid-shaped id ('c' + 24 lower-case base-36 characters) from the first 24 digest bytes:
 * about 124 bits, so ids of millions of rows do not collide.
 */
export function idFromDigest(digest: Buffer): string {
  let id = 'c';
  for (let i = 0; i < 24; i++) id += BASE36[digest[i]! % 36];
  return id;
}

export function seedId(seed: number, kind: string, key: string | number): string {
  return idFromDigest(seedDigest(seed, kind, key));
}

/** sfc32: small, fast, 128-bit state, passes PractRand; plenty for demo data. */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(a: number, b: number, c: number, d: number) {
    this.a = a | 0;
    this.b = b | 0;
    this.c = c | 0;
    this.d = d | 0;
    // The first outputs of sfc32 are correlated with the seed words.
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  static fromDigest(digest: Buffer): Random {
    return new Random(digest.readUInt32LE(16), digest.readUInt32LE(20), digest.readUInt32LE(24), digest.readUInt32LE(28));
  }

  static for(seed: number, kind: string, key: string | number): Random {
    return Random.fromDigest(seedDigest(seed, kind, key));
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Picks with the given relative weights. */
  weighted<T>(items: readonly T[], weights: readonly number[]): T {
    let total = 0;
    for (const w of weights) total += w;
    let x = this.next() * total;
    for (let i = 0; i < items.length; i++) {
      x -= weights[i]!;
      if (x < 0) return items[i]!;
    }
    return items[items.length - 1]!;
  }

  /** `count` distinct items in random order (partial Fisher–Yates on a copy). */
  sample<T>(items: readonly T[], count: number): T[] {
    const copy = items.slice();
    const n = Math.min(count, copy.length);
    for (let i = 0; i < n; i++) {
      const j = i + Math.floor(this.next() * (copy.length - i));
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    return copy.slice(0, n);
  }
}

/**
 * Precomputed cumulative weights, for picks repeated millions of times over the same list
 * (binary search instead of a linear scan).
 */
export class WeightedTable<T> {
  private readonly cumulative: number[] = [];
  private readonly total: number;

  constructor(
    private readonly items: readonly T[],
    weights: readonly number[],
  ) {
    if (items.length === 0 || items.length !== weights.length) throw new RangeError('WeightedTable needs one weight per item');
    let sum = 0;
    for (const w of weights) {
      sum += w;
      this.cumulative.push(sum);
    }
    this.total = sum;
  }

  pick(random: Random): T {
    const x = random.next() * this.total;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cumulative[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    return this.items[lo]!;
  }
}

/** ASCII slug: diacritics dropped (ș→s), lower case, runs of anything else become one dash. */
export function slugify(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}
