import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import type { WebhookPolicy } from '../../context/context.js';

/** Which webhook targets are acceptable (SSRF rules): the policy the app builds from its config. */
export type TargetPolicy = WebhookPolicy;

export const MAX_URL_LENGTH = 2000;
const RESOLVE_TIMEOUT_MS = 5000;
const PRIVATE_ADDRESS_PROBLEM = 'must not point to a private, loopback or link-local address';

/** Every currently allocated global unicast IPv6 address is in 2000::/3. */
const IPV6_GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * A public unicast address. IPv4-mapped IPv6 is judged as the IPv4 it wraps; everything ipaddr.js
 * gives a special range (loopback, private, link-local, CGNAT, 6to4, teredo, NAT64, reserved, …)
 * is not public. IPv6 must also be in 2000::/3, which rules out the deprecated IPv4-compatible
 * ::a.b.c.d form (ipaddr.js calls ::7f00:1 "unicast"). Only strict textual forms (net.isIP) are
 * accepted: "127.1" or "0x7f.1" would be a hostname to Node, not an address.
 */
export function isPublicAddress(ip: string): boolean {
  if (typeof ip !== 'string' || net.isIP(ip) === 0) return false;
  try {
    const address = ipaddr.process(ip);
    return address.range() === 'unicast' && (address.kind() === 'ipv4' || address.match(IPV6_GLOBAL_UNICAST));
  } catch {
    return false;
  }
}

/** The host of a parsed URL as an address or name: `new URL()` keeps IPv6 literals bracketed. */
export function urlHost(url: URL): string {
  const host = url.hostname;
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** What is wrong with a URL as a webhook target, judged without DNS; null when nothing is. */
export function urlProblem(raw: unknown, policy: TargetPolicy): string | null {
  if (typeof raw !== 'string') return 'must be a string';
  if (raw.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (policy.requireHttps) {
    if (url.protocol !== 'https:') return 'must be an https URL';
  } else if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return 'must be an http or https URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not contain credentials (user:password@)';
  // An empty fragment ("…/#") leaves url.hash empty, so look at the text too.
  if (url.hash !== '' || raw.includes('#')) return 'must not contain a fragment (#…)';
  const host = urlHost(url);
  if (host === '') return 'must have a host';
  if (net.isIP(host) !== 0 && !policy.allowPrivate && !isPublicAddress(host)) return PRIVATE_ADDRESS_PROBLEM;
  return null;
}

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

/**
 * urlProblem, then DNS: a named host must resolve within 5 s, and (unless allowPrivate) to public
 * addresses only. Delivery checks again at connect time (send.ts); this is the early, friendly answer.
 */
export async function targetProblem(raw: unknown, policy: TargetPolicy, resolve: Resolver = systemResolver): Promise<string | null> {
  const problem = urlProblem(raw, policy);
  if (problem !== null) return problem;
  const host = urlHost(new URL(raw as string));
  if (net.isIP(host) !== 0) return null;

  const unresolved = `must have a host that resolves (${host})`;
  let addresses: { address: string; family: number }[];
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), RESOLVE_TIMEOUT_MS);
    });
    addresses = await Promise.race([resolve(host), timeout]);
  } catch {
    return unresolved;
  } finally {
    clearTimeout(timer);
  }
  if (addresses.length === 0) return unresolved;
  if (!policy.allowPrivate && addresses.some((a) => !isPublicAddress(a.address))) return PRIVATE_ADDRESS_PROBLEM;
  return null;
}
