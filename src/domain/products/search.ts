// Search is case- and diacritics-insensitive ("masina" finds "mașină"). Stored search columns
// and query terms are both passed through searchKey, so the two always agree.

/** Lower-case, strip combining marks (ă→a, ș→s, ţ→t), collapse white space. */
export function searchKey(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

export function productSearchText(p: { name: string; nameEn: string; description: string; sku: string | null }): string {
  return searchKey([p.name, p.nameEn, p.description, p.sku ?? ''].join(' '));
}

export function supplierSearchText(s: { companyName: string; description: string; city: string; county: string }): string {
  return searchKey([s.companyName, s.description, s.city, s.county].join(' '));
}

/**
 * The words of a search term, each escaped for a LIKE pattern (Prisma's `contains` does not
 * escape `%` and `_`, which would otherwise match anything).
 */
export function searchWords(term: string): string[] {
  return searchKey(term)
    .split(' ')
    .filter(Boolean)
    .map((w) => w.replace(/[\\%_]/g, (c) => `\\${c}`));
}
