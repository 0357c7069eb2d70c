-- Written by hand (Prisma does not model planner statistics).
-- A finer sample of "searchText" for the planner. With the default (100) it guessed the number of
-- products a search word matches off by two orders of magnitude either way, and so chose between
-- walking the newest-first index and the trigram index badly: at 1,000,000 products "otel"
-- (16,648 matches) was estimated at 94 and took 183 ms instead of 8 ms (BENCHMARKS.md).
ALTER TABLE "Product" ALTER COLUMN "searchText" SET STATISTICS 1000;
-- Takes effect at the next ANALYZE; do it now rather than whenever autovacuum does.
ANALYZE "Product";
