import { z } from 'zod';
import { intParam } from './validation.js';

// Pagination bounds from the spec: page ≥ 1 (default 1), limit 1–100 (default 12).
export const PAGE_DEFAULT = 1;
export const LIMIT_DEFAULT = 12;
export const LIMIT_MAX = 100;

/** GraphQL's Int is 32-bit, so that is the highest page either interface accepts. */
export const PAGE_MAX = 2 ** 31 - 1;

export const pageParam = intParam(1, PAGE_MAX);
export const limitParam = intParam(1, LIMIT_MAX);

/** Spread into a list's input schema. */
export const pageParams = {
  page: pageParam.default(PAGE_DEFAULT),
  limit: limitParam.default(LIMIT_DEFAULT),
};

/** The input of a list that takes nothing but a page. */
export const pageInput = z.object(pageParams).strict();

export interface PageInput {
  page: number;
  limit: number;
}

export interface PaginationMeta {
  page: number;
  limit: number;
  total: number;
  totalPages: number;
}

// No table holds more rows than this; a page beyond it is empty without asking the database.
const MAX_OFFSET = 2 ** 31 - 1;

/** skip/take for a page, or null when the page is certainly past the end. */
export function pageWindow({ page, limit }: PageInput): { skip: number; take: number } | null {
  const skip = (page - 1) * limit;
  return skip > MAX_OFFSET ? null : { skip, take: limit };
}

export function paginationMeta({ page, limit }: PageInput, total: number): PaginationMeta {
  return { page, limit, total, totalPages: Math.ceil(total / limit) };
}
