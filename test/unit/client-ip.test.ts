import { describe, expect, it } from 'vitest';
import { createClientIpResolver, normalizeIp, UNKNOWN_IP } from '../../src/shared/client-ip.js';

describe('client IP without trusted proxies', () => {
  for (const config of [undefined, '', '   ']) {
    it(`ignores X-Forwarded-For entirely (TRUSTED_PROXIES=${JSON.stringify(config)})`, () => {
      const ip = createClientIpResolver(config);
      expect(ip('203.0.113.7', null)).toBe('203.0.113.7');
      // Spoofing the header changes nothing, whatever is in it.
      expect(ip('203.0.113.7', '1.2.3.4')).toBe('203.0.113.7');
      expect(ip('203.0.113.7', '1.2.3.4, 5.6.7.8')).toBe('203.0.113.7');
      expect(ip('203.0.113.7', 'not-an-ip')).toBe('203.0.113.7');
      // Even from loopback: a local proxy is only believed when configured.
      expect(ip('127.0.0.1', '9.9.9.9')).toBe('127.0.0.1');
    });
  }

  it('normalises IPv4-mapped IPv6 socket addresses', () => {
    const ip = createClientIpResolver(undefined);
    expect(ip('::ffff:203.0.113.7', null)).toBe('203.0.113.7');
    expect(ip('::FFFF:127.0.0.1', '9.9.9.9')).toBe('127.0.0.1');
  });

  it('charges a request without a socket address to one "unknown" bucket', () => {
    expect(createClientIpResolver(undefined)(undefined, '1.2.3.4')).toBe(UNKNOWN_IP);
    expect(createClientIpResolver('loopback')(undefined, '1.2.3.4')).toBe(UNKNOWN_IP);
  });
});

describe('client IP behind trusted proxies', () => {
  it('takes the right-most address that is not a trusted proxy', () => {
    const ip = createClientIpResolver('10.0.0.0/8');
    // client → 10.0.0.2 → 10.0.0.1 → us; the client claims to be 6.6.6.6.
    expect(ip('10.0.0.1', '6.6.6.6, 198.51.100.4, 10.0.0.2')).toBe('198.51.100.4');
    expect(ip('10.0.0.1', '198.51.100.4')).toBe('198.51.100.4');
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', () => {
    const ip = createClientIpResolver('10.0.0.0/8');
    expect(ip('203.0.113.7', '10.0.0.5, 1.2.3.4')).toBe('203.0.113.7');
  });

  it('cannot be fooled by a client that prepends trusted-looking addresses', () => {
    const ip = createClientIpResolver('10.0.0.1');
    // The client sent "X-Forwarded-For: 10.0.0.1"; the proxy appended the real address.
    expect(ip('10.0.0.1', '10.0.0.1, 198.51.100.9')).toBe('198.51.100.9');
  });

  it('uses the socket address when a trusted proxy sent no X-Forwarded-For', () => {
    expect(createClientIpResolver('loopback')('127.0.0.1', null)).toBe('127.0.0.1');
  });

  it('takes the left-most address when every hop is trusted', () => {
    const ip = createClientIpResolver('10.0.0.0/8');
    expect(ip('10.0.0.1', '10.9.9.9, 10.0.0.2')).toBe('10.9.9.9');
  });

  it('accepts several entries, proxy-addr names, CIDRs and IPv6, with spaces', () => {
    const ip = createClientIpResolver(' loopback , 172.16.0.0/12,2001:db8::/32 ');
    expect(ip('::1', '198.51.100.1')).toBe('198.51.100.1');
    expect(ip('172.20.1.1', '198.51.100.2')).toBe('198.51.100.2');
    expect(ip('2001:db8::10', '2001:DB9:0:0::99, 2001:db8::11')).toBe('2001:db9::99');
    expect(ip('2001:db9::1', '198.51.100.3')).toBe('2001:db9::1');
  });

  it('treats IPv4-mapped addresses like the IPv4 address they carry', () => {
    const ip = createClientIpResolver('127.0.0.1');
    // Node reports IPv4 peers of a dual-stack socket as ::ffff:a.b.c.d.
    expect(ip('::ffff:127.0.0.1', '::ffff:198.51.100.5')).toBe('198.51.100.5');
    expect(ip('::ffff:127.0.0.1', '198.51.100.6')).toBe('198.51.100.6');
  });

  it('drops a port some proxies append', () => {
    const ip = createClientIpResolver('loopback');
    expect(ip('127.0.0.1', '198.51.100.7:51234')).toBe('198.51.100.7');
    expect(ip('127.0.0.1', '[2001:db8::7]:51234')).toBe('2001:db8::7');
  });

  it('never charges to garbage a trusted proxy passed on: the proxy is charged instead', () => {
    const ip = createClientIpResolver('loopback');
    expect(ip('127.0.0.1', 'garbage')).toBe('127.0.0.1');
    expect(ip('127.0.0.1', '1.2.3.4, unknown')).toBe('127.0.0.1');
    expect(ip('127.0.0.1', ' , ')).toBe('127.0.0.1');
  });
});

describe('TRUSTED_PROXIES validation', () => {
  for (const bad of ['not-an-ip', '10.0.0.0/33', '10.0.0.1,', '10.0.0.1,,10.0.0.2', '999.1.1.1', 'loopback; 10.0.0.1']) {
    it(`refuses ${JSON.stringify(bad)} at creation, naming the variable`, () => {
      expect(() => createClientIpResolver(bad)).toThrow(/^Invalid TRUSTED_PROXIES/);
    });
  }
});

describe('normalizeIp', () => {
  it('writes one canonical form per address', () => {
    expect(normalizeIp('::ffff:1.2.3.4')).toBe('1.2.3.4');
    expect(normalizeIp('0:0:0:0:0:ffff:0102:0304')).toBe('1.2.3.4');
    expect(normalizeIp('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(normalizeIp('2001:0DB8:0000:0000:0000:0000:0000:0001')).toBe('2001:db8::1');
    expect(normalizeIp('1.2.3.4')).toBe('1.2.3.4');
    expect(normalizeIp('::1')).toBe('::1');
  });
});
