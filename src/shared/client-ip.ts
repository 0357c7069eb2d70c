import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';
import proxyaddr from 'proxy-addr';

/** What a request whose socket address is unknown (socket already gone) is charged to. */
export const UNKNOWN_IP = 'unknown';

/**
 * The client address a request is charged to, from its socket address and X-Forwarded-For.
 *
 * - No trusted proxies (`trustedProxies` unset or blank): the socket address, and X-Forwarded-For
 *   is ignored entirely — anyone can write that header, so believing it would let a client pick
 *   its own rate-limit bucket.
 * - With `trustedProxies` (comma-separated IPs, CIDRs, netmasks, or proxy-addr's names
 *   `loopback`, `linklocal`, `uniquelocal`): walk the chain from the socket leftwards through
 *   X-Forwarded-For and take the first address that is not a trusted proxy, i.e. the right-most
 *   untrusted one. Entries left of it were written by the client and are never looked at.
 *
 * Addresses are normalised so one client has one bucket: IPv4-mapped IPv6 (`::ffff:1.2.3.4`)
 * becomes `1.2.3.4`, IPv6 is written in its canonical short lower-case form.
 * Throws at creation when `trustedProxies` is not valid.
 */
export function createClientIpResolver(
  trustedProxies: string | undefined,
): (remoteAddress: string | undefined, forwardedFor: string | null) => string {
  const trust = compileTrust(trustedProxies);
  if (!trust) return (remoteAddress) => (remoteAddress ? normalizeIp(remoteAddress) : UNKNOWN_IP);

  return (remoteAddress, forwardedFor) => {
    // The hop we did not see connect cannot vouch for anything.
    if (!remoteAddress) return UNKNOWN_IP;
    // Nearest hop first: our socket's peer, then X-Forwarded-For from right to left.
    const chain = [remoteAddress, ...parseForwardedFor(forwardedFor).reverse()];
    for (let i = 0; i < chain.length - 1; i++) {
      const hop = chain[i] as string;
      // proxy-addr's own rule: whoever hop i is, if it is trusted we believe what it says about i + 1.
      if (!trust(hop, i)) return normalizeIp(hop);
      const next = chain[i + 1] as string;
      // A trusted proxy that passed on something that is not an address: charge the proxy's
      // own view of the client, which is the hop itself (never the garbage).
      if (!isValidIp(next)) return normalizeIp(hop);
    }
    // Everything trusted (a request from inside the proxy tier): the left-most address.
    return normalizeIp(chain[chain.length - 1] as string);
  };
}

/**
 * Whether a request reached us over HTTPS. The service speaks plain HTTP itself, so only a trusted
 * proxy that terminated TLS can say so, in X-Forwarded-Proto (its left-most value: the scheme the
 * client used); from anyone else the header is ignored. Throws at creation like the resolver.
 */
export function createHttpsDetector(trustedProxies: string | undefined): (remoteAddress: string | undefined, forwardedProto: string | null) => boolean {
  const trust = compileTrust(trustedProxies);
  return (remoteAddress, forwardedProto) =>
    Boolean(trust && remoteAddress && forwardedProto && trust(remoteAddress, 0) && forwardedProto.split(',')[0]!.trim().toLowerCase() === 'https');
}

type TrustFn = (addr: string, i: number) => boolean;

function compileTrust(trustedProxies: string | undefined): TrustFn | undefined {
  if (trustedProxies === undefined || trustedProxies.trim() === '') return undefined;
  const entries = trustedProxies.split(',').map((s) => s.trim());
  if (entries.some((e) => e === '')) {
    throw new Error(`Invalid TRUSTED_PROXIES "${trustedProxies}": empty entry (expected comma-separated IPs, CIDRs or loopback/linklocal/uniquelocal)`);
  }
  try {
    return proxyaddr.compile(entries);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`Invalid TRUSTED_PROXIES "${trustedProxies}": ${reason} (expected comma-separated IPs, CIDRs or loopback/linklocal/uniquelocal)`);
  }
}

/** X-Forwarded-For's addresses, left (client's claim) to right (nearest proxy). */
function parseForwardedFor(header: string | null): string[] {
  if (!header) return [];
  return header
    .split(',')
    .map((s) => stripPort(s.trim()))
    .filter((s) => s !== '');
}

// Some proxies write the client's port too (1.2.3.4:5678, [2001:db8::1]:5678); the port is not
// part of who the client is.
const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
const BRACKETED_IPV6 = /^\[([^\]]+)\](?::\d{1,5})?$/;

function stripPort(entry: string): string {
  const match = IPV4_WITH_PORT.exec(entry) ?? BRACKETED_IPV6.exec(entry);
  return match ? (match[1] as string) : entry;
}

function isValidIp(addr: string): boolean {
  return isIP(addr) !== 0;
}

const MAPPED_IPV4 = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;

/** Canonical text of an address; anything that is not an IP address is returned as it came. */
export function normalizeIp(addr: string): string {
  const kind = isIP(addr);
  if (kind === 4) return addr;
  if (kind !== 6) return addr;
  let canonical: string;
  try {
    // The WHATWG URL parser writes IPv6 in RFC 5952 form: lower case, zeros compressed, and an
    // embedded IPv4 as two hex groups (::ffff:1.2.3.4 → ::ffff:102:304).
    canonical = new URL(`http://[${addr}]/`).hostname.slice(1, -1);
  } catch {
    return addr.toLowerCase(); // e.g. a zone index (fe80::1%eth0), which URLs do not allow
  }
  const mapped = MAPPED_IPV4.exec(canonical);
  if (mapped) {
    const hi = parseInt(mapped[1] as string, 16);
    const lo = parseInt(mapped[2] as string, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return canonical;
}

/**
 * The anonymous bucket of an address. An IPv6 client usually holds a whole /64, so the /64 is
 * the client; one bucket per address would let it pick a fresh one for every request.
 */
export function anonymousBucket(ip: string): string {
  if (!ipaddr.IPv6.isValid(ip) || ipaddr.IPv4.isValid(ip)) return `ip:${ip}`;
  const parts = ipaddr.IPv6.parse(ip).parts.slice(0, 4);
  return `ip6:${parts.map((p) => p.toString(16)).join(':')}::/64`;
}
