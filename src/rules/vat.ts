// Romania's VAT rates since August 2025, by the class a product is in: the only rates a product
// can carry (the seed sets them, a supplier's price update may pick any of them).
export const VAT_RATES = { STANDARD: '0.21', REDUCED: '0.11', EXEMPT: '0.00' } as const;
export type VatCategory = keyof typeof VAT_RATES;
