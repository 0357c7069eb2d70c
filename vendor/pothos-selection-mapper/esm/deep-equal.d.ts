/**
 * Structural equality for query arguments (`where`, `orderBy`, `take`, ...). Keys holding
 * `undefined` are treated as absent, so `{ where: cond ? filter : undefined }` compares equal to
 * `{}` when the condition is false.
 */
export declare function deepEqual(left: unknown, right: unknown): boolean;
//# sourceMappingURL=deep-equal.d.ts.map