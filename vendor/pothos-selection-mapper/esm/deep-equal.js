/**
 * Structural equality for query arguments (`where`, `orderBy`, `take`, ...). Keys holding
 * `undefined` are treated as absent, so `{ where: cond ? filter : undefined }` compares equal to
 * `{}` when the condition is false.
 */ export function deepEqual(left, right) {
    if (left === right) {
        return true;
    }
    if (left && right && typeof left === 'object' && typeof right === 'object') {
        if (Array.isArray(left) || Array.isArray(right)) {
            if (!Array.isArray(left) || !Array.isArray(right)) {
                return false;
            }
            const { length } = left;
            if (right.length !== length) {
                return false;
            }
            for(let i = 0; i < length; i += 1){
                if (!deepEqual(left[i], right[i])) {
                    return false;
                }
            }
            return true;
        }
        const lValue = left.valueOf?.();
        const rValue = right.valueOf?.();
        // A boxed value (a Date, a boxed primitive) compares by its primitive, whichever side it is
        // on: a plain object's `valueOf` returns the object itself, and a null-prototype object has
        // none at all, so neither is mistaken for one.
        if (lValue != null && typeof lValue !== 'object' || rValue != null && typeof rValue !== 'object') {
            return lValue === rValue;
        }
        const keys = comparedKeys(left);
        if (keys.length !== comparedKeys(right).length) {
            return false;
        }
        for (const key of keys){
            if (!deepEqual(left[key], right[key])) {
                return false;
            }
        }
        return true;
    }
    return false;
}
function comparedKeys(value) {
    return Object.keys(value).filter((key)=>value[key] !== undefined);
}

//# sourceMappingURL=deep-equal.js.map