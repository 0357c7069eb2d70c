/**
 * The types the adapter contract and the entry points mention: where a field is, what a select
 * function is handed, what an entry point takes, and how one merge differs from a plain one.
 */ "use strict";
Object.defineProperty(exports, "__esModule", {
    value: true
});

//# sourceMappingURL=types.js.map