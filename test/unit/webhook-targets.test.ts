import net from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { isPublicAddress, MAX_URL_LENGTH, targetProblem, urlProblem, type TargetPolicy } from '../../src/domain/webhooks/targets.js';

// Webhook targets (src/domain/webhooks/targets.ts): the SSRF rules, with a stand-in resolver. The
// real resolver and delivery attempts against real servers: test/webhook-targets.test.ts.

const PRIVATE = 'must not point to a private, loopback or link-local address';
const production: TargetPolicy = { allowPrivate: false, requireHttps: true };
const publicOnly: TargetPolicy = { allowPrivate: false, requireHttps: false };
const development: TargetPolicy = { allowPrivate: true, requireHttps: false };

describe('isPublicAddress', () => {
  it('accepts public unicast addresses', () => {
    for (const ip of ['8.8.8.8', '93.184.216.34', '2001:4860:4860::8888', '::ffff:8.8.8.8']) expect(isPublicAddress(ip), ip).toBe(true);
  });

  it('refuses loopback, private, link-local, special-purpose and unparsable addresses', () => {
    for (const ip of [
      '127.0.0.1', '127.8.9.10', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1',
      '0.0.0.0', '224.0.0.1', '255.255.255.255', '192.0.2.1', '198.51.100.1', '203.0.113.1', '198.18.0.1', '240.0.0.1',
      '::1', '::', 'fe80::1', 'fe80::1%eth0', 'fc00::1', 'fd00:ec2::254', 'ff02::1', '2001:db8::1',
      '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::7f00:1',
      '2002:7f00:1::', '2001::1', '64:ff9b::a00:1',
      'nonsense', '', '127.1', '0x7f.0.0.1', '2130706433', '8.8.8.8.', ' 8.8.8.8',
    ]) {
      expect(isPublicAddress(ip), ip).toBe(false);
    }
  });
});

describe('urlProblem', () => {
  it('accepts an https URL with a public name, without DNS', () => {
    expect(urlProblem('https://example.com/x', production)).toBeNull();
    expect(urlProblem('https://example.com:8443/hooks?key=1', production)).toBeNull();
    expect(urlProblem('http://example.com/x', publicOnly)).toBeNull();
    expect(urlProblem('https://8.8.8.8/x', production)).toBeNull();
  });

  it('refuses what is not an absolute http(s) URL', () => {
    expect(urlProblem('ftp://example.com/x', publicOnly)).toBe('must be an http or https URL');
    expect(urlProblem('javascript:alert(1)', publicOnly)).toBe('must be an http or https URL');
    expect(urlProblem('file:///etc/passwd', publicOnly)).toBe('must be an http or https URL');
    expect(urlProblem('ftp://example.com/x', production)).toBe('must be an https URL');
    expect(urlProblem('/hooks', publicOnly)).toBe('must be an absolute URL');
    expect(urlProblem('example.com/hooks', publicOnly)).toBe('must be an absolute URL');
    expect(urlProblem('', publicOnly)).toBe('must be an absolute URL');
    expect(urlProblem('http://', publicOnly)).toBe('must be an absolute URL');
  });

  it('refuses non-strings', () => {
    for (const value of [undefined, null, 42, {}, ['https://example.com/'], new URL('https://example.com/')]) {
      expect(urlProblem(value, publicOnly)).toBe('must be a string');
    }
  });

  it('refuses plain http when https is required', () => {
    expect(urlProblem('http://example.com/x', production)).toBe('must be an https URL');
    expect(urlProblem('http://example.com/x', { allowPrivate: true, requireHttps: true })).toBe('must be an https URL');
  });

  it('refuses credentials, fragments and over-long URLs', () => {
    expect(urlProblem('https://user:secret@example.com/x', production)).toBe('must not contain credentials (user:password@)');
    expect(urlProblem('https://user@example.com/x', production)).toBe('must not contain credentials (user:password@)');
    expect(urlProblem('https://example.com/x#part', production)).toBe('must not contain a fragment (#…)');
    expect(urlProblem('https://example.com/x#', production)).toBe('must not contain a fragment (#…)');
    const base = 'https://example.com/';
    expect(urlProblem(base + 'a'.repeat(MAX_URL_LENGTH - base.length), production)).toBeNull();
    expect(urlProblem(base + 'a'.repeat(MAX_URL_LENGTH - base.length + 1), production)).toBe('must be at most 2000 characters');
  });

  it('refuses IP literals that are not public unless private targets are allowed', () => {
    for (const url of [
      'http://127.0.0.1/x', 'http://127.0.0.1:8080/x', 'http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/', 'http://[::1]:3000/', 'http://[fe80::1]/', 'http://[::ffff:127.0.0.1]/', 'http://0.0.0.0/',
      // WHATWG URL parsing turns these into 127.0.0.1 before we look.
      'http://2130706433/', 'http://0x7f.1/', 'http://127.1/',
    ]) {
      expect(urlProblem(url, publicOnly), url).toBe(PRIVATE);
      expect(urlProblem(url, development), url).toBeNull();
    }
  });

  it('leaves names to DNS: localhost is not refused here', () => {
    expect(urlProblem('http://localhost:3000/', publicOnly)).toBeNull();
  });
});

describe('targetProblem', () => {
  const resolvingTo = (...addresses: string[]) => async () => addresses.map((address) => ({ address, family: net.isIP(address) }));

  it('refuses a name that resolves to a private address', async () => {
    expect(await targetProblem('https://internal.example/x', production, resolvingTo('10.0.0.5'))).toBe(PRIVATE);
    expect(await targetProblem('https://internal.example/x', production, resolvingTo('::ffff:192.168.0.1'))).toBe(PRIVATE);
  });

  it('accepts a name that resolves to public addresses only', async () => {
    expect(await targetProblem('https://example.com/x', production, resolvingTo('93.184.216.34'))).toBeNull();
    expect(await targetProblem('https://example.com/x', production, resolvingTo('93.184.216.34', '2606:2800:220:1::1'))).toBeNull();
  });

  it('refuses a name with any private address among public ones', async () => {
    expect(await targetProblem('https://example.com/x', production, resolvingTo('93.184.216.34', '127.0.0.1'))).toBe(PRIVATE);
    expect(await targetProblem('https://example.com/x', production, resolvingTo('93.184.216.34', 'fd00::1'))).toBe(PRIVATE);
  });

  it('allows private addresses when told to', async () => {
    expect(await targetProblem('http://internal.example/x', development, resolvingTo('10.0.0.5'))).toBeNull();
  });

  it('refuses a name that does not resolve', async () => {
    const failing = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' });
    };
    expect(await targetProblem('https://nowhere.invalid/x', production, failing)).toBe('must have a host that resolves (nowhere.invalid)');
    expect(await targetProblem('https://nowhere.invalid/x', production, resolvingTo())).toBe('must have a host that resolves (nowhere.invalid)');
  });

  it('gives up on a resolver that takes longer than 5 s', async () => {
    vi.useFakeTimers();
    try {
      const answer = targetProblem('https://slow.example/x', production, () => new Promise(() => {}));
      await vi.advanceTimersByTimeAsync(5000);
      expect(await answer).toBe('must have a host that resolves (slow.example)');
    } finally {
      vi.useRealTimers();
    }
  });

  it('checks the URL before resolving anything', async () => {
    let asked = false;
    const resolver = async () => {
      asked = true;
      return [{ address: '93.184.216.34', family: 4 }];
    };
    expect(await targetProblem('http://example.com/x', production, resolver)).toBe('must be an https URL');
    expect(await targetProblem('https://[::1]/x', production, resolver)).toBe(PRIVATE);
    expect(await targetProblem('https://8.8.8.8/x', production, resolver)).toBeNull();
    expect(asked).toBe(false);
  });
});
