/**
 * The types the adapter contract and the entry points mention: where a field is, what a select
 * function is handed, what an entry point takes, and how one merge differs from a plain one.
 */ /**
 * A key of a type-level selection that cannot be merged with what a node already holds. `kind`
 * chooses the error message, so it is the ORM's own word for the key rather than this package's:
 * prisma reports a conflicting `_count` as a `relation`, since that is what a user wrote.
 */ export { };

//# sourceMappingURL=types.js.map