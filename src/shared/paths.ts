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

/** The host[:port] of a URL, undefined for anything that is not one (an Origin of `null`). Logs and records name an endpoint by it: its path or query may hold a token. */
export function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}
