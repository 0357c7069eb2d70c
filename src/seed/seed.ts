import { availableParallelism } from 'node:os';
import pg from 'pg';
import { withCuiCheckDigit } from '../rules/cui.js';
import { VAT_RATES, type VatCategory } from '../rules/vat.js';
import { productSearchText, searchKey, supplierSearchText } from '../domain/products/search.js';
import { DEMO_ACCOUNTS, DEMO_COUPONS } from './data/accounts.js';
import { CATALOG, DESCRIPTION_COMMERCE, DESCRIPTION_USES, ORIGINS, type SubcategoryDef, type Term } from './data/catalog.js';
import { CITIES, MOBILE_PREFIXES, STREETS, ZONES, type City } from './data/geo.js';
import { Random, WeightedTable, idFromDigest, seedDigest, seedId, slugify } from './data/random.js';
import {
  REVIEW_TEXTS,
  SUPPLIER_REGIONS,
  SUPPLIER_RESPONSES_NEGATIVE,
  SUPPLIER_RESPONSES_POSITIVE,
  SUPPLIER_ROLES,
  SUPPLIER_SERVICES,
  SUPPLIER_SUFFIXES,
} from './data/texts.js';

// The demo catalogue of a Romanian B2B marketplace, written with plain `pg` (Prisma would cost
// minutes at a million rows). Reference rows (categories, suppliers, accounts, addresses,
// coupons) are a function of the seed; product number i with its reviews and favorites is a
// function of (seed, i) alone. So the same seed always yields the same rows, and asking for
// more products than a database holds appends exactly the missing ones.

/**
 * The demo's "now": every timestamp is placed relative to it, never to the clock, so that two
 * runs produce identical rows. Chosen after Romania's August 2025 VAT change (21 % / 11 %).
 */
export const SEED_BASE_DATE = new Date('2025-10-01T08:00:00.000Z');

const BASE_MS = SEED_BASE_DATE.getTime();
const DAY_MS = 86_400_000;
const SUPPLIER_COUNT = 44;
const INACTIVE_SUPPLIER_COUNT = 3;
/** Only the first products can be favourited, so the demo accounts' lists stay short. */
const FAVORITE_WINDOW = 3_000;
/**
 * Rows per INSERT. Parameters travel as one JSON document per table, so PostgreSQL's 65,535
 * bind-parameter limit does not apply; the size only trades memory against round trips.
 */
const BATCH_SIZE = 2_500;
/**
 * Connections inserting batches in parallel. PostgreSQL's side (trigram index, nine B-trees,
 * foreign keys) costs several times what building the rows costs here, so this is what scales.
 */
const MAX_WRITERS = 4;
const WRITERS = Math.min(MAX_WRITERS, Math.max(2, availableParallelism()));
/** Two seeders on one database (e.g. two servers starting at once) take turns. */
const SEED_LOCK_KEY = 0x5eed_c47a;


export interface SeedSummary {
  seed: number;
  /** Seeded products found before this run. */
  productsBefore: number;
  productsRequested: number;
  /** Rows this run added (0 for what was already there). */
  inserted: {
    categories: number;
    suppliers: number;
    accounts: number;
    addresses: number;
    coupons: number;
    products: number;
    reviews: number;
    favorites: number;
  };
  durationMs: number;
}

/** The database holds another catalogue under the same slugs/CUIs (usually: another seed). */
export class SeedConflictError extends Error {
  override name = 'SeedConflictError';
}

// Row shapes: keys are the column names, values as sent to PostgreSQL (money and rates as
// decimal strings, timestamps as ISO strings).

export interface CategoryRow {
  id: string;
  name: string;
  nameEn: string;
  slug: string;
  description: string;
  image: string | null;
  parentId: string | null;
  order: number;
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface SupplierRow {
  id: string;
  companyName: string;
  cui: string;
  address: string;
  city: string;
  county: string;
  cityKey: string;
  countyKey: string;
  searchText: string;
  phone: string;
  email: string;
  description: string;
  logo: string | null;
  website: string | null;
  verified: boolean;
  rating: string;
  reviewCount: number;
  isActive: boolean;
  shippingFee: string;
  freeShippingThreshold: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ProductRow {
  id: string;
  name: string;
  nameEn: string;
  slug: string;
  description: string;
  price: string;
  compareAtPrice: string | null;
  minOrder: number;
  stock: number;
  lowStockThreshold: number;
  trackInventory: boolean;
  sku: string;
  images: string[];
  specifications: Record<string, string>;
  isActive: boolean;
  isFeatured: boolean;
  viewCount: number;
  vatRate: string;
  vatCategory: VatCategory;
  searchText: string;
  supplierId: string;
  categoryId: string;
  createdAt: string;
  updatedAt: string;
}

export interface ReviewRow {
  id: string;
  productId: string;
  supplierId: string;
  accountId: string | null;
  rating: number;
  title: string;
  comment: string;
  images: string[];
  isVerified: boolean;
  verifiedPurchase: boolean;
  supplierResponse: string | null;
  createdAt: string;
}

export interface FavoriteRow {
  accountId: string;
  productId: string;
  createdAt: string;
}

export interface AccountRow {
  id: string;
  email: string;
  name: string;
  companyName: string | null;
  phone: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface AddressRow {
  id: string;
  accountId: string;
  label: string;
  fullName: string;
  companyName: string | null;
  phone: string;
  email: string | null;
  address: string;
  city: string;
  county: string;
  postalCode: string;
  isDefault: boolean;
  createdAt: string;
}

export interface CouponRow {
  id: string;
  code: string;
  type: 'PERCENTAGE' | 'FIXED';
  value: string;
  supplierId: string | null;
  minSubtotal: string;
  validFrom: string;
  validUntil: string | null;
  isActive: boolean;
  createdAt: string;
}

// PostgreSQL types of the columns, as json_to_recordset needs them. `satisfies` keeps each
// list in step with its row type.
const CATEGORY_COLUMNS = {
  id: 'text',
  name: 'text',
  nameEn: 'text',
  slug: 'text',
  description: 'text',
  image: 'text',
  parentId: 'text',
  order: 'int',
  isActive: 'boolean',
  createdAt: 'timestamptz',
  updatedAt: 'timestamptz',
} as const satisfies Record<keyof CategoryRow, string>;

const SUPPLIER_COLUMNS = {
  id: 'text',
  companyName: 'text',
  cui: 'text',
  address: 'text',
  city: 'text',
  county: 'text',
  cityKey: 'text',
  countyKey: 'text',
  searchText: 'text',
  phone: 'text',
  email: 'text',
  description: 'text',
  logo: 'text',
  website: 'text',
  verified: 'boolean',
  rating: 'numeric',
  reviewCount: 'int',
  isActive: 'boolean',
  shippingFee: 'numeric',
  freeShippingThreshold: 'numeric',
  createdAt: 'timestamptz',
  updatedAt: 'timestamptz',
} as const satisfies Record<keyof SupplierRow, string>;

const PRODUCT_COLUMNS = {
  id: 'text',
  name: 'text',
  nameEn: 'text',
  slug: 'text',
  description: 'text',
  price: 'numeric',
  compareAtPrice: 'numeric',
  minOrder: 'int',
  stock: 'int',
  lowStockThreshold: 'int',
  trackInventory: 'boolean',
  sku: 'text',
  images: 'text[]',
  specifications: 'jsonb',
  isActive: 'boolean',
  isFeatured: 'boolean',
  viewCount: 'int',
  vatRate: 'numeric',
  vatCategory: '"VatCategory"',
  searchText: 'text',
  supplierId: 'text',
  categoryId: 'text',
  createdAt: 'timestamptz',
  updatedAt: 'timestamptz',
} as const satisfies Record<keyof ProductRow, string>;

const REVIEW_COLUMNS = {
  id: 'text',
  productId: 'text',
  supplierId: 'text',
  accountId: 'text',
  rating: 'int',
  title: 'text',
  comment: 'text',
  images: 'text[]',
  isVerified: 'boolean',
  verifiedPurchase: 'boolean',
  supplierResponse: 'text',
  createdAt: 'timestamptz',
} as const satisfies Record<keyof ReviewRow, string>;

const FAVORITE_COLUMNS = {
  accountId: 'text',
  productId: 'text',
  createdAt: 'timestamptz',
} as const satisfies Record<keyof FavoriteRow, string>;

const ACCOUNT_COLUMNS = {
  id: 'text',
  email: 'text',
  name: 'text',
  companyName: 'text',
  phone: 'text',
  createdAt: 'timestamptz',
  updatedAt: 'timestamptz',
} as const satisfies Record<keyof AccountRow, string>;

const ADDRESS_COLUMNS = {
  id: 'text',
  accountId: 'text',
  label: 'text',
  fullName: 'text',
  companyName: 'text',
  phone: 'text',
  email: 'text',
  address: 'text',
  city: 'text',
  county: 'text',
  postalCode: 'text',
  isDefault: 'boolean',
  createdAt: 'timestamptz',
} as const satisfies Record<keyof AddressRow, string>;

const COUPON_COLUMNS = {
  id: 'text',
  code: 'text',
  type: '"CouponType"',
  value: 'numeric',
  supplierId: 'text',
  minSubtotal: 'numeric',
  validFrom: 'timestamptz',
  validUntil: 'timestamptz',
  isActive: 'boolean',
  createdAt: 'timestamptz',
} as const satisfies Record<keyof CouponRow, string>;

// ---------------------------------------------------------------------------------------------
// Reference data
// ---------------------------------------------------------------------------------------------

interface SubcategoryInfo {
  readonly def: SubcategoryDef;
  readonly row: CategoryRow;
  readonly topIndex: number;
  /** Inactive parent or own flag: its products are inactive. */
  readonly isActive: boolean;
}

interface SupplierInfo {
  readonly row: SupplierRow;
  /** Short upper-case code used in SKUs. */
  readonly code: string;
  /** 0–1: shifts the ratings of its reviews, so supplier ratings differ. */
  readonly quality: number;
}

export interface DemoCatalog {
  readonly seed: number;
  /** Top-level categories first, then subcategories. */
  readonly categories: readonly CategoryRow[];
  readonly suppliers: readonly SupplierRow[];
  readonly accounts: readonly AccountRow[];
  /** `accountId` refers to `accounts`; remapped when an account already exists by e-mail. */
  readonly addresses: readonly AddressRow[];
  readonly coupons: readonly CouponRow[];
  readonly subcategoryTable: WeightedTable<SubcategoryInfo>;
  readonly suppliersByTop: readonly WeightedTable<SupplierInfo>[];
}

const iso = (ms: number): string => new Date(ms).toISOString();
const money = (cents: number): string => (cents / 100).toFixed(2);

/** Everything but the products: a function of the seed alone. */
export function buildDemoCatalog(seed: number): DemoCatalog {
  assertSeed(seed);
  const categories: CategoryRow[] = [];
  const subcategories: SubcategoryInfo[] = [];
  const slugs = new Set<string>();
  const categoryRow = (name: string, nameEn: string, description: string, parentId: string | null, order: number, isActive: boolean, ageDays: number): CategoryRow => {
    const slug = slugify(name);
    if (slugs.has(slug)) throw new Error(`Duplicate category slug in the seed data: ${slug}`);
    slugs.add(slug);
    const createdAt = BASE_MS - ageDays * DAY_MS;
    return {
      id: seedId(seed, 'category', slug),
      name,
      nameEn,
      slug,
      description,
      image: `https://images.example.com/categories/${slug}.jpg`,
      parentId,
      order,
      isActive,
      createdAt: iso(createdAt),
      updatedAt: iso(createdAt + 30 * DAY_MS),
    };
  };
  CATALOG.forEach((top, t) => {
    categories.push(categoryRow(top.name, top.nameEn, top.description, null, t + 1, true, 1200 - t));
  });
  CATALOG.forEach((top, t) => {
    const parent = categories[t]!;
    top.subcategories.forEach((def, s) => {
      const isActive = def.isActive ?? true;
      const row = categoryRow(def.name, def.nameEn, def.description, parent.id, s + 1, isActive, 1190 - t);
      for (const item of def.items) {
        if ((item[2] ?? def.sizes).length === 0) throw new Error(`No sizes for ${item[0]} in ${def.name}`);
      }
      categories.push(row);
      subcategories.push({ def, row, topIndex: t, isActive: isActive && parent.isActive });
    });
  });
  // Inactive subcategories get fewer products so that ~5 % of all products end up inactive.
  const subcategoryTable = new WeightedTable(
    subcategories,
    subcategories.map((s) => s.def.weight ?? 1),
  );

  const { suppliers, suppliersByTop } = buildSuppliers(seed);
  const { accounts, addresses } = buildAccounts(seed);
  const activeSuppliers = suppliers.filter((s) => s.row.isActive);
  const coupons: CouponRow[] = DEMO_COUPONS.map((c) => {
    const validFrom = BASE_MS + c.validFromDays * DAY_MS;
    const validUntil = c.validUntil === null ? null : typeof c.validUntil === 'string' ? c.validUntil : iso(BASE_MS + c.validUntil * DAY_MS);
    const supplier = c.supplier === null ? null : activeSuppliers[c.supplier % activeSuppliers.length]!;
    return {
      id: seedId(seed, 'coupon', c.code),
      code: c.code,
      type: c.type,
      value: c.value,
      supplierId: supplier?.row.id ?? null,
      minSubtotal: c.minSubtotal,
      validFrom: iso(validFrom),
      validUntil,
      isActive: c.isActive,
      createdAt: iso(Math.min(validFrom, BASE_MS) - DAY_MS),
    };
  });

  return {
    seed,
    categories,
    suppliers: suppliers.map((s) => s.row),
    accounts,
    addresses,
    coupons,
    subcategoryTable,
    suppliersByTop,
  };
}

function buildSuppliers(seed: number): { suppliers: SupplierInfo[]; suppliersByTop: WeightedTable<SupplierInfo>[] } {
  const random = Random.for(seed, 'suppliers', 0);
  const topCount = CATALOG.length;
  const topOrder = random.sample(
    CATALOG.map((_, i) => i),
    topCount,
  );
  const cityTable = new WeightedTable(CITIES, CITIES.map((c) => c.weight));
  // Inactive suppliers have different main categories, so every category keeps active ones.
  const inactive = new Set<number>();
  const usedPrimaries = new Set<number>();
  for (const k of random.sample(
    Array.from({ length: SUPPLIER_COUNT }, (_, i) => i),
    SUPPLIER_COUNT,
  )) {
    const primary = topOrder[k % topCount]!;
    if (usedPrimaries.has(primary)) continue;
    usedPrimaries.add(primary);
    inactive.add(k);
    if (inactive.size === INACTIVE_SUPPLIER_COUNT) break;
  }

  const names = new Set<string>();
  const cuis = new Set<string>();
  const suppliers: SupplierInfo[] = [];
  const byTop: { items: SupplierInfo[]; weights: number[] }[] = CATALOG.map(() => ({ items: [], weights: [] }));
  for (let k = 0; k < SUPPLIER_COUNT; k++) {
    const primary = topOrder[k % topCount]!;
    const specialties = [primary];
    if (random.chance(0.5)) specialties.push(random.int(0, topCount - 1));
    if (random.chance(0.15)) specialties.push(random.int(0, topCount - 1));
    const tops = [...new Set(specialties)];

    const top = CATALOG[primary]!;
    let stem: string, region: string, suffix: string;
    do {
      stem = random.pick(top.supplierStems);
      region = random.pick(SUPPLIER_REGIONS);
      suffix = random.pick(SUPPLIER_SUFFIXES);
    } while (names.has(`${stem} ${region} ${suffix}`));
    names.add(`${stem} ${region} ${suffix}`);
    const legalForm = random.chance(0.15) ? 'S.A.' : 'S.R.L.';
    const companyName = `${stem} ${region} ${suffix} ${legalForm}`;
    const handle = slugify(`${stem} ${region} ${suffix}`);
    const domain = `${handle.replace(/-/g, '')}.example.com`;
    const code = handle
      .split('-')
      .map((w) => w[0]!.toUpperCase())
      .join('')
      .slice(0, 3);

    let cui: string;
    // Mostly 8-digit CUIs as issued since the 1990s, some older 7-digit ones.
    do cui = withCuiCheckDigit(String(random.chance(0.2) ? random.int(100_000, 999_999) : random.int(1_000_000, 4_999_999)));
    while (cuis.has(cui));
    cuis.add(cui);

    const city = cityTable.pick(random);
    const street = `${random.pick(STREETS)} nr. ${random.int(1, 240)}`;
    const inZone = random.chance(0.35);
    const sector = city.city === 'București' ? `, Sector ${random.int(1, 6)}` : '';
    const address = inZone ? `${random.pick(ZONES)}, ${street}${sector}` : `${street}${sector}`;
    const phone = random.chance(0.7) ? landline(city, random) : mobile(random);
    const founded = random.int(1994, 2021);
    const trades = tops.map((t) => CATALOG[t]!.trade);
    const tradeText = trades.length > 1 ? `${trades.slice(0, -1).join(', ')} și ${trades.at(-1)!}` : trades[0]!;
    const description = `${random.pick(SUPPLIER_ROLES)} de ${tradeText} din ${city.city}, pe piață din ${founded}. ${random.pick(SUPPLIER_SERVICES)}`;
    const isActive = !inactive.has(k);
    const verified = random.chance(isActive ? 0.7 : 0.2);
    const shippingFeeCents = random.pick([0, 1999, 2490, 2900, 3500, 4900]);
    const threshold = shippingFeeCents === 0 ? null : random.pick([30_000, 50_000, 75_000, 100_000, 150_000, null]);
    const createdAt = BASE_MS - random.int(750, 2200) * DAY_MS - random.int(0, DAY_MS - 1);
    const row: SupplierRow = {
      id: seedId(seed, 'supplier', k),
      companyName,
      cui,
      address,
      city: city.city,
      county: city.county,
      cityKey: searchKey(city.city),
      countyKey: searchKey(city.county),
      searchText: supplierSearchText({ companyName, description, city: city.city, county: city.county }),
      phone,
      email: `${random.pick(['contact', 'office', 'vanzari', 'comenzi'])}@${domain}`,
      description,
      logo: `https://images.example.com/suppliers/${handle}.png`,
      website: `https://www.${domain}`,
      verified,
      // Replaced by the average of the seeded reviews once products are in.
      rating: '0.00',
      reviewCount: 0,
      isActive,
      shippingFee: money(shippingFeeCents),
      freeShippingThreshold: threshold === null ? null : money(threshold),
      createdAt: iso(createdAt),
      updatedAt: iso(createdAt + random.int(1, 700) * DAY_MS),
    };
    const info: SupplierInfo = { row, code, quality: random.next() };
    suppliers.push(info);
    const popularity = (0.4 + random.next() * 1.2) * (isActive ? 1 : 0.3);
    tops.forEach((t, i) => {
      byTop[t]!.items.push(info);
      byTop[t]!.weights.push(i === 0 ? popularity : popularity / 2);
    });
  }
  return { suppliers, suppliersByTop: byTop.map((b) => new WeightedTable(b.items, b.weights)) };
}

function landline(city: City, random: Random): string {
  // Bucharest numbers have 7 digits after the 2-digit area code, the rest 6 after 3 digits.
  if (city.areaCode.length === 2) return `+40 ${city.areaCode} ${random.int(200, 799)} ${String(random.int(0, 9999)).padStart(4, '0')}`;
  return `+40 ${city.areaCode} ${random.int(200, 599)} ${String(random.int(0, 999)).padStart(3, '0')}`;
}

function mobile(random: Random): string {
  return `+40 ${random.pick(MOBILE_PREFIXES)} ${String(random.int(0, 999)).padStart(3, '0')} ${String(random.int(0, 999)).padStart(3, '0')}`;
}

function buildAccounts(seed: number): { accounts: AccountRow[]; addresses: AddressRow[] } {
  const random = Random.for(seed, 'accounts', 0);
  const cities = new Map(CITIES.map((c) => [c.city, c]));
  const accounts: AccountRow[] = [];
  const addresses: AddressRow[] = [];
  DEMO_ACCOUNTS.forEach((a, i) => {
    const createdAt = BASE_MS - (520 - i * 41) * DAY_MS;
    const account: AccountRow = {
      id: seedId(seed, 'account', a.email),
      email: a.email,
      name: a.name,
      companyName: a.companyName,
      phone: a.phone,
      createdAt: iso(createdAt),
      updatedAt: iso(createdAt + 7 * DAY_MS),
    };
    accounts.push(account);
    a.addresses.forEach((addr, k) => {
      const city = cities.get(addr.city);
      if (city === undefined) throw new Error(`Demo address city ${addr.city} is not in geo.ts`);
      addresses.push({
        id: seedId(seed, 'address', `${a.email}/${k}`),
        accountId: account.id,
        label: addr.label,
        fullName: addr.fullName,
        companyName: addr.companyName,
        phone: addr.phone,
        email: a.email,
        address: addr.address,
        city: city.city,
        county: city.county,
        postalCode: (city.postalPrefix + String(random.int(0, 999_999)).padStart(6, '0')).slice(0, 6),
        isDefault: addr.isDefault,
        createdAt: iso(createdAt + (k + 1) * DAY_MS),
      });
    });
  });
  return { accounts, addresses };
}

// ---------------------------------------------------------------------------------------------
// Products
// ---------------------------------------------------------------------------------------------

export interface DemoProduct {
  product: ProductRow;
  reviews: ReviewRow[];
  favorites: FavoriteRow[];
}

export function demoProductId(seed: number, index: number): string {
  return seedId(seed, 'product', index);
}

/**
 * Product number `index` with its reviews and favorites: a pure function of the catalogue's
 * seed and the index. `accountIds` (in DEMO_ACCOUNTS order) are the ids the demo accounts have
 * in the target database.
 */
export function buildDemoProduct(catalog: DemoCatalog, index: number, accountIds: readonly string[] = catalog.accounts.map((a) => a.id)): DemoProduct {
  const digest = seedDigest(catalog.seed, 'product', index);
  const id = idFromDigest(digest);
  const random = Random.fromDigest(digest);

  const sub = catalog.subcategoryTable.pick(random);
  const def = sub.def;
  const supplier = catalog.suppliersByTop[sub.topIndex]!.pick(random);
  const item = random.pick(def.items);
  const variant = random.pick(def.variants);
  const brand = random.pick(def.brands);
  const sizes: readonly Term[] = item[2] ?? def.sizes;
  const sizeIndex = random.int(0, sizes.length - 1);
  const size = sizes[sizeIndex]!;

  const name = `${item[0]} ${variant[0]} ${brand}, ${size[0]}`;
  const nameEn = `${brand} ${item[1]} ${variant[1]}, ${size[1]}`;
  const slug = `${truncateSlug(slugify(`${item[0]} ${variant[0]} ${brand} ${size[0]}`), 80)}-${index.toString(36)}`;
  const sku = `${def.code}-${supplier.code}-${index.toString(36).toUpperCase().padStart(6, '0')}`;

  let description = `${name.endsWith('.') ? name : `${name}.`} ${random.pick(DESCRIPTION_USES)} ${random.pick(DESCRIPTION_COMMERCE)}`;
  if (random.chance(0.3)) description += ` ${def.description}`;

  // Larger sizes sit higher in the price range; the range is spanned geometrically.
  const [min, max] = item[3] ?? def.price;
  const position = (sizeIndex + random.next()) / sizes.length;
  const priceCents = roundPrice(min * Math.pow(max / min, position), random);
  let compareAtCents: number | null = null;
  if (random.chance(0.3)) {
    compareAtCents = Math.max(roundPrice((priceCents / 100) * (1.08 + random.next() * 0.37), random), priceCents + 100);
  }

  const vatCategory: VatCategory = def.vat ?? 'STANDARD';
  const isService = vatCategory === 'EXEMPT';
  const bulk = def.bulk ?? false;
  const trackInventory = !isService && random.chance(0.96);
  const lowStockThreshold = bulk ? random.pick([20, 50, 100]) : random.pick([3, 5, 10, 10, 20]);
  const stockRoll = random.next();
  let stock: number;
  if (isService) stock = 0;
  else if (stockRoll < 0.07) stock = 0;
  else if (stockRoll < 0.17) stock = random.int(1, lowStockThreshold);
  else stock = random.int(lowStockThreshold + 1, bulk ? 20_000 : 600);
  const minOrder = bulk ? random.weighted([1, 5, 10, 25, 50], [6, 2, 2, 1, 1]) : random.chance(0.03) ? 2 : 1;

  const specifications: Record<string, string> = { Marcă: brand, [def.sizeLabel]: size[0] };
  for (const [key, values] of Object.entries(def.specs)) specifications[key] = random.pick(values);
  specifications['Țara de origine'] = random.pick(ORIGINS);
  if (def.durable) specifications['Garanție'] = random.pick(['12 luni', '24 de luni', '36 de luni']);

  const imageCount = random.weighted([1, 2, 3, 4], [3, 3, 2, 2]);
  const images: string[] = [];
  for (let k = 1; k <= imageCount; k++) images.push(`https://images.example.com/products/${def.code.toLowerCase()}/${id}-${k}.jpg`);

  const isFeatured = random.chance(0.05);
  // Heavy tail: most products are seen a few hundred times, a few tens of thousands.
  const viewCount = Math.floor(3 + 15_000 * Math.pow(random.next(), 5)) * (isFeatured ? 3 : 1);
  const createdMs = BASE_MS - Math.floor(random.next() * 730 * DAY_MS);
  const updatedMs = createdMs + Math.floor(random.next() * Math.min(BASE_MS - createdMs, 120 * DAY_MS));
  const ownInactive = random.chance(0.03);
  const isActive = !ownInactive && sub.isActive && supplier.row.isActive;

  const product: ProductRow = {
    id,
    name,
    nameEn,
    slug,
    description,
    price: money(priceCents),
    compareAtPrice: compareAtCents === null ? null : money(compareAtCents),
    minOrder,
    stock,
    lowStockThreshold,
    trackInventory,
    sku,
    images,
    specifications,
    isActive,
    isFeatured,
    viewCount,
    vatRate: VAT_RATES[vatCategory],
    vatCategory,
    searchText: productSearchText({ name, nameEn, description, sku }),
    supplierId: supplier.row.id,
    categoryId: sub.row.id,
    createdAt: iso(createdMs),
    updatedAt: iso(updatedMs),
  };

  const reviews: ReviewRow[] = [];
  const reviewCount = random.weighted([0, 1, 2, 3, 4], [30, 25, 20, 15, 10]);
  const q = supplier.quality;
  const ratingWeights = [6 * (1.6 - q), 7 * (1.6 - q), 12, 30, 45 * (0.4 + q)];
  const reviewers = random.sample(accountIds, accountIds.length);
  for (let j = 0; j < reviewCount; j++) {
    const reviewId = seedId(catalog.seed, 'review', `${index}.${j}`);
    const rating = random.weighted([1, 2, 3, 4, 5], ratingWeights);
    const texts = REVIEW_TEXTS[rating - 1]!;
    const respond = random.chance(rating <= 2 ? 0.6 : rating === 3 ? 0.3 : 0.12);
    const response = respond ? random.pick(rating >= 4 ? SUPPLIER_RESPONSES_POSITIVE : SUPPLIER_RESPONSES_NEGATIVE) : null;
    const byDemoAccount = random.chance(0.1) ? (reviewers.pop() ?? null) : null;
    reviews.push({
      id: reviewId,
      productId: id,
      supplierId: supplier.row.id,
      accountId: byDemoAccount,
      rating,
      title: random.pick(texts.titles),
      comment: random.pick(texts.comments),
      images: random.chance(0.08) ? [`https://images.example.com/reviews/${reviewId}-1.jpg`] : [],
      isVerified: random.chance(0.7),
      verifiedPurchase: random.chance(0.6),
      supplierResponse: response,
      createdAt: iso(createdMs + Math.floor(random.next() * (BASE_MS - createdMs))),
    });
  }

  const favorites: FavoriteRow[] = [];
  if (index < FAVORITE_WINDOW && isActive) {
    for (const accountId of accountIds) {
      if (random.chance(0.012)) {
        favorites.push({ accountId, productId: id, createdAt: iso(createdMs + Math.floor(random.next() * (BASE_MS - createdMs))) });
      }
    }
  }
  return { product, reviews, favorites };
}

/** Shop-like prices: 1.249,90 → 1.249,99 / 1.249,90 / 1.250,00; 12,3 → 12,49; 2,37 → 2,35. */
function roundPrice(value: number, random: Random): number {
  if (value >= 100) return Math.max(100, Math.round(value) * 100 - random.pick([1, 10, 0]));
  if (value >= 10) return Math.floor(value) * 100 + random.pick([99, 90, 49, 50]);
  return Math.max(50, Math.round((value * 100) / 5) * 5);
}

function truncateSlug(slug: string, max: number): string {
  if (slug.length <= max) return slug;
  const cut = slug.slice(0, max);
  const dash = cut.lastIndexOf('-');
  return dash > 0 ? cut.slice(0, dash) : cut;
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

const quote = (identifier: string): string => `"${identifier}"`;

/**
 * INSERT … SELECT from one JSON array parameter. Rows that already exist (same id or same
 * unique key) are skipped, which is what makes every insert of the seed repeatable.
 */
function insertFromJson(table: string, columns: Readonly<Record<string, string>>, param: string, where = '', returning = ''): string {
  const names = Object.keys(columns).map(quote);
  const definitions = Object.entries(columns).map(([column, type]) => `${quote(column)} ${type}`);
  return (
    `INSERT INTO ${quote(table)} (${names.join(', ')}) ` +
    `SELECT ${names.map((n) => `r.${n}`).join(', ')} FROM json_to_recordset(${param}::json) AS r(${definitions.join(', ')}) ` +
    `${where} ON CONFLICT DO NOTHING ${returning}`
  );
}

/**
 * One statement per batch, hence one implicit transaction: a product never lands without its
 * reviews. Reviews and favorites are kept only for products this statement inserted.
 */
const PRODUCT_BATCH_SQL = `
WITH p AS (${insertFromJson('Product', PRODUCT_COLUMNS, '$1', '', 'RETURNING "id"')}),
rv AS (${insertFromJson('Review', REVIEW_COLUMNS, '$2', 'WHERE r."productId" IN (SELECT "id" FROM p)', 'RETURNING 1')}),
fv AS (${insertFromJson('Favorite', FAVORITE_COLUMNS, '$3', 'WHERE r."productId" IN (SELECT "id" FROM p)', 'RETURNING 1')})
SELECT (SELECT count(*) FROM p)::int AS products, (SELECT count(*) FROM rv)::int AS reviews, (SELECT count(*) FROM fv)::int AS favorites`;

interface BatchCounts {
  products: number;
  reviews: number;
  favorites: number;
}

/**
 * Seeds the demo catalogue for `opts.seed` (a non-negative integer) so that the database holds
 * its first `opts.products` products: reference rows are inserted when absent, missing
 * products appended, nothing is updated or deleted. `onProgress(done, total)` is called with
 * the seeded products present (first call: those found) after each batch. Throws
 * SeedConflictError when the database holds the catalogue of another seed.
 */
export async function seedDatabase(url: string, opts: { seed: number; products: number; onProgress?: (done: number, total: number) => void }): Promise<SeedSummary> {
  const started = performance.now();
  assertSeed(opts.seed);
  if (!Number.isSafeInteger(opts.products) || opts.products < 0) {
    throw new RangeError(`products must be a non-negative integer, got ${opts.products}`);
  }
  const total = opts.products;
  const catalog = buildDemoCatalog(opts.seed);
  const client = await connect(url);
  const writers: pg.Client[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [SEED_LOCK_KEY]);
    const reference = await insertReferenceData(client, catalog);
    const before = await countSeededProducts(client, opts.seed, total);
    opts.onProgress?.(Math.min(before, total), total);

    const inserted = { ...reference.inserted, products: 0, reviews: 0, favorites: 0 };
    if (before < total) {
      for (let i = 0; i < Math.min(WRITERS, Math.ceil((total - before) / BATCH_SIZE)); i++) writers.push(await connect(url));
      const counts = await writeProducts(writers, catalog, reference.accountIds, before, total, (done) => opts.onProgress?.(done, total));
      inserted.products = counts.products;
      inserted.reviews = counts.reviews;
      inserted.favorites = counts.favorites;
    }
    if (inserted.reviews > 0 || inserted.suppliers > 0) await refreshSupplierRatings(client, catalog);
    if (inserted.products > 0) await finishBulkLoad(client);

    return {
      seed: opts.seed,
      productsBefore: before,
      productsRequested: total,
      inserted,
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    await Promise.all(writers.map((w) => w.end()));
    // Ending the session also releases the advisory lock.
    await client.end();
  }
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'marketplace-seed' });
  await client.connect();
  // Losing the last batches to a crash is harmless (a rerun adds them again), and not waiting
  // for each WAL flush saves time. A large GIN pending list turns millions of trigram index
  // insertions into a few bulk merges; finishBulkLoad flushes what is left.
  await client.query(`SET synchronous_commit = off; SET work_mem = '64MB'; SET gin_pending_list_limit = '32MB'`);
  return client;
}

/**
 * Builds batches in index order and hands each to a free connection, so PostgreSQL inserts on
 * several cores while the next batch is being built. At most WRITERS batches are in flight
 * (see countSeededProducts for why that bound matters).
 */
async function writeProducts(
  writers: readonly pg.Client[],
  catalog: DemoCatalog,
  accountIds: readonly string[],
  from: number,
  to: number,
  onProgress: (done: number) => void,
): Promise<BatchCounts> {
  const totals: BatchCounts = { products: 0, reviews: 0, favorites: 0 };
  const idle = [...writers];
  const inFlight: { end: number; result: Promise<BatchCounts> }[] = [];
  const settleOldest = async (): Promise<void> => {
    const oldest = inFlight.shift()!;
    const counts = await oldest.result;
    totals.products += counts.products;
    totals.reviews += counts.reviews;
    totals.favorites += counts.favorites;
    onProgress(oldest.end);
  };
  try {
    for (let start = from; start < to; start += BATCH_SIZE) {
      const end = Math.min(to, start + BATCH_SIZE);
      const products: ProductRow[] = [];
      const reviews: ReviewRow[] = [];
      const favorites: FavoriteRow[] = [];
      for (let i = start; i < end; i++) {
        const built = buildDemoProduct(catalog, i, accountIds);
        products.push(built.product);
        for (const r of built.reviews) reviews.push(r);
        for (const f of built.favorites) favorites.push(f);
      }
      const params = [JSON.stringify(products), JSON.stringify(reviews), JSON.stringify(favorites)];
      while (inFlight.length >= writers.length || idle.length === 0) await settleOldest();
      const writer = idle.pop()!;
      const result = writer.query<BatchCounts>(PRODUCT_BATCH_SQL, params).then((r) => {
        idle.push(writer);
        return r.rows[0]!;
      });
      // Rejections are observed by settleOldest; this only keeps Node from reporting them early.
      result.catch(() => undefined);
      inFlight.push({ end, result });
    }
    while (inFlight.length > 0) await settleOldest();
    return totals;
  } catch (error) {
    await Promise.allSettled(inFlight.map((f) => f.result));
    throw error;
  }
}

/** Flushes GIN pending lists (searches would scan them) and refreshes planner statistics. */
async function finishBulkLoad(client: pg.Client): Promise<void> {
  const gin = await client.query<{ index: string }>(
    `SELECT i.indexrelid::regclass::text AS index FROM pg_index i
     JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
     WHERE i.indrelid = '"Product"'::regclass AND am.amname = 'gin'`,
  );
  for (const { index } of gin.rows) await client.query('SELECT gin_clean_pending_list($1::regclass)', [index]);
  await client.query('ANALYZE "Product", "Review", "Favorite", "Supplier"');
}

interface ReferenceResult {
  inserted: { categories: number; suppliers: number; accounts: number; addresses: number; coupons: number };
  /** Ids of the demo accounts in this database, in DEMO_ACCOUNTS order. */
  accountIds: string[];
}

async function insertReferenceData(client: pg.Client, catalog: DemoCatalog): Promise<ReferenceResult> {
  await client.query('BEGIN');
  try {
    const count = async (sql: string, rows: readonly object[]): Promise<number> => (await client.query(sql, [JSON.stringify(rows)])).rowCount ?? 0;
    const categories = await count(insertFromJson('Category', CATEGORY_COLUMNS, '$1'), catalog.categories);
    const suppliers = await count(insertFromJson('Supplier', SUPPLIER_COLUMNS, '$1'), catalog.suppliers);
    await assertAllPresent(client, 'Category', catalog.categories.map((c) => c.id), 'category slugs');
    await assertAllPresent(client, 'Supplier', catalog.suppliers.map((s) => s.id), 'supplier CUIs');

    const accounts = await count(insertFromJson('Account', ACCOUNT_COLUMNS, '$1'), catalog.accounts);
    // An account may predate the seed (e.g. created with a key for the same e-mail): use it.
    const existing = await client.query<{ id: string; email: string }>('SELECT "id", "email" FROM "Account" WHERE "email" = ANY($1)', [catalog.accounts.map((a) => a.email)]);
    const idByEmail = new Map(existing.rows.map((r) => [r.email, r.id]));
    const remap = new Map(catalog.accounts.map((a) => [a.id, idByEmail.get(a.email)!]));
    const addressRows = catalog.addresses.map((a) => ({ ...a, accountId: remap.get(a.accountId)! }));
    const addresses = await count(insertFromJson('Address', ADDRESS_COLUMNS, '$1'), addressRows);
    const coupons = await count(insertFromJson('Coupon', COUPON_COLUMNS, '$1'), catalog.coupons);
    await client.query('COMMIT');
    return {
      inserted: { categories, suppliers, accounts, addresses, coupons },
      accountIds: catalog.accounts.map((a) => idByEmail.get(a.email)!),
    };
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

async function assertAllPresent(client: pg.Client, table: string, ids: readonly string[], keys: string): Promise<void> {
  const result = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${quote(table)} WHERE "id" = ANY($1)`, [ids]);
  if (result.rows[0]!.n !== ids.length) {
    throw new SeedConflictError(
      `The database already holds ${table} rows with the demo catalogue's ${keys} but other ids, ` +
        'most likely seeded with another seed value. Seed an empty database, or use the seed it was created with.',
    );
  }
}

/**
 * Where to resume: the number of seeded products known to be present as a prefix 0..M-1.
 * Batches commit in index order except that up to WRITERS of them are in flight at once, so
 * after an interrupted run the present products are a prefix followed by at most
 * WRITERS × BATCH_SIZE indexes with gaps. A binary search on ids lands inside that window;
 * the window is then checked, and when it has gaps the run resumes at its start (inserts skip
 * rows that exist).
 */
async function countSeededProducts(client: pg.Client, seed: number, requested: number): Promise<number> {
  const exists = async (index: number): Promise<boolean> =>
    ((await client.query('SELECT 1 FROM "Product" WHERE "id" = $1', [demoProductId(seed, index)])).rowCount ?? 0) > 0;
  if (requested === 0 || !(await exists(0))) return 0;
  let found: number;
  if (await exists(requested - 1)) found = requested;
  else {
    let present = 0;
    let absent = requested - 1;
    while (absent - present > 1) {
      const mid = Math.floor((present + absent) / 2);
      if (await exists(mid)) present = mid;
      else absent = mid;
    }
    found = present + 1;
  }
  // MAX_WRITERS, not WRITERS: the interrupted run may have had more cores than this one.
  const windowStart = Math.max(0, found - MAX_WRITERS * BATCH_SIZE);
  const ids = [];
  for (let i = windowStart; i < found; i++) ids.push(demoProductId(seed, i));
  const present = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM "Product" WHERE "id" = ANY($1)', [ids]);
  return present.rows[0]!.n === ids.length ? found : windowStart;
}

/** rating = mean of the supplier's reviews (2 decimals), reviewCount = their number. */
async function refreshSupplierRatings(client: pg.Client, catalog: DemoCatalog): Promise<void> {
  await client.query(
    `UPDATE "Supplier" s SET "rating" = x.rating, "reviewCount" = x.n
     FROM (SELECT sp."id", COALESCE(round(avg(r."rating"), 2), 0) AS rating, count(r."id")::int AS n
           FROM "Supplier" sp LEFT JOIN "Review" r ON r."supplierId" = sp."id"
           WHERE sp."id" = ANY($1) GROUP BY sp."id") x
     WHERE s."id" = x."id" AND (s."rating" <> x.rating OR s."reviewCount" <> x.n)`,
    [catalog.suppliers.map((s) => s.id)],
  );
}

function assertSeed(seed: number): void {
  if (!Number.isSafeInteger(seed) || seed < 0) throw new RangeError(`seed must be a non-negative integer, got ${seed}`);
}
