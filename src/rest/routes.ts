import { parseCategoryListInput } from '../modules/categories/categories.service.js';
import { parseProductListInput } from '../modules/products/products.service.js';
import { parseSupplierListInput } from '../modules/suppliers/suppliers.service.js';
import { parseInput } from '../validation.js';
import { z } from 'zod';

// The documented REST paths, each one GraphQL operation on the same schema. The selection set
// is the REST representation: what a path returns is read here and nowhere else.

const PRODUCT_FIELDS = /* GraphQL */ `
  fragment RestProduct on Product {
    id name nameEn slug description price compareAtPrice minOrder stock sku images specifications
    isActive isFeatured viewCount vatRate vatCategory createdAt updatedAt
    supplier { id companyName verified rating }
    category { id name slug }
    _count { reviews favorites }
  }`;

const CATEGORY_FIELDS = /* GraphQL */ `
  fragment RestCategory on Category {
    id name nameEn slug description image parentId order isActive createdAt
    children { id name slug }
    _count { products }
  }`;

const SUPPLIER_FIELDS = /* GraphQL */ `
  fragment RestSupplier on Supplier {
    id companyName cui address city county phone email description logo website verified rating reviewCount createdAt
    _count { products reviews }
  }`;

const META = 'meta { page limit total totalPages }';

/** How the operation's result becomes the envelope: a list (items, and meta when paginated) or one record. */
export type RestShape = { kind: 'list'; field: string } | { kind: 'one'; field: string; notFound: string };

export interface RestRoute {
  /** Path with `:name` segments, e.g. /api/products/:slug */
  path: string;
  method: 'GET';
  /** Validates the query string (all values strings); throws VALIDATION_ERROR naming each bad parameter. */
  parseQuery: (raw: Record<string, string>) => Record<string, unknown>;
  document: string;
  variables: (query: Record<string, unknown>, params: Record<string, string>) => Record<string, unknown>;
  shape: RestShape;
}

const noQueryParams = z.object({}).strict();
const parseNone = (raw: Record<string, string>) => parseInput(noQueryParams, raw);

/** GraphQL enum values are the REST values in upper case (newest → NEWEST). */
const upperSort = (q: Record<string, unknown>) => ({ ...q, sortBy: String(q.sortBy).toUpperCase() });

export const restRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/api/products',
    parseQuery: parseProductListInput,
    document: `query RestProducts($page: Int, $limit: Int, $search: String, $categoryId: ID, $supplierId: ID,
        $minPrice: Float, $maxPrice: Float, $featured: Boolean, $sortBy: ProductSort) {
      products(page: $page, limit: $limit, search: $search, categoryId: $categoryId, supplierId: $supplierId,
          minPrice: $minPrice, maxPrice: $maxPrice, featured: $featured, sortBy: $sortBy) {
        items { ...RestProduct } ${META}
      }
    } ${PRODUCT_FIELDS}`,
    variables: upperSort,
    shape: { kind: 'list', field: 'products' },
  },
  {
    method: 'GET',
    path: '/api/products/:slug',
    parseQuery: parseNone,
    document: `query RestProduct($slug: String!) { product(slug: $slug) { ...RestProduct } } ${PRODUCT_FIELDS}`,
    variables: (_q, params) => ({ slug: params.slug }),
    shape: { kind: 'one', field: 'product', notFound: 'Product' },
  },
  {
    method: 'GET',
    path: '/api/categories',
    parseQuery: parseCategoryListInput,
    document: `query RestCategories($page: Int, $limit: Int, $parentOnly: Boolean, $includeProducts: Boolean!) {
      categories(page: $page, limit: $limit, parentOnly: $parentOnly) {
        items { ...RestCategory products(limit: 4) @include(if: $includeProducts) { id name slug price images } }
        ${META}
      }
    } ${CATEGORY_FIELDS}`,
    variables: (q) => ({ ...q, includeProducts: q.includeProducts === true }),
    shape: { kind: 'list', field: 'categories' },
  },
  {
    method: 'GET',
    path: '/api/categories/:slug',
    parseQuery: parseNone,
    document: `query RestCategory($slug: String!) { category(slug: $slug) { ...RestCategory } } ${CATEGORY_FIELDS}`,
    variables: (_q, params) => ({ slug: params.slug }),
    shape: { kind: 'one', field: 'category', notFound: 'Category' },
  },
  {
    method: 'GET',
    path: '/api/suppliers',
    parseQuery: parseSupplierListInput,
    document: `query RestSuppliers($page: Int, $limit: Int, $search: String, $verified: Boolean, $city: String,
        $county: String, $sortBy: SupplierSort) {
      suppliers(page: $page, limit: $limit, search: $search, verified: $verified, city: $city, county: $county, sortBy: $sortBy) {
        items { ...RestSupplier } ${META}
      }
    } ${SUPPLIER_FIELDS}`,
    variables: upperSort,
    shape: { kind: 'list', field: 'suppliers' },
  },
  {
    method: 'GET',
    path: '/api/suppliers/:id',
    parseQuery: parseNone,
    document: `query RestSupplier($id: ID!) { supplier(id: $id) { ...RestSupplier } } ${SUPPLIER_FIELDS}`,
    variables: (_q, params) => ({ id: params.id }),
    shape: { kind: 'one', field: 'supplier', notFound: 'Supplier' },
  },
];
