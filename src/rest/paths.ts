/** A route path with `:name` segments (e.g. /api/products/:slug) as a regular expression. */
export function pathPattern(path: string): { pattern: RegExp; paramNames: string[] } {
  const paramNames: string[] = [];
  const source = path.replace(/:([a-zA-Z]+)/g, (_m, name: string) => {
    paramNames.push(name);
    return '([^/]+)';
  });
  return { pattern: new RegExp(`^${source}$`), paramNames };
}

/** One trailing slash is tolerated: /api/products/ is /api/products. */
export const withoutTrailingSlash = (pathname: string) =>
  pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;

/**
 * A low-cardinality name for a request path, for metrics and logs: the matching route pattern,
 * a fixed path, or "other" (never the raw path, which a client could vary without end).
 */
export function createRouteNamer(routePaths: readonly string[], fixedPaths: readonly string[]) {
  const patterns = [...new Set(routePaths)].map((path) => ({ path, ...pathPattern(path) }));
  const fixed = new Set(fixedPaths);
  return (pathname: string): string => {
    const path = withoutTrailingSlash(pathname);
    if (fixed.has(path)) return path;
    if (path === '/dashboard' || path.startsWith('/dashboard/')) return '/dashboard';
    return patterns.find((p) => p.pattern.test(path))?.path ?? (path.startsWith('/api/') || path === '/api' ? '/api/other' : 'other');
  };
}
