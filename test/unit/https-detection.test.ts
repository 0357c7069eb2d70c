import { describe, expect, it } from 'vitest';
import { createHttpsDetector } from '../../src/shared/client-ip.js';

// Whether a request reached the service over HTTPS (src/shared/client-ip.ts): the service speaks
// plain HTTP, so only a trusted proxy that terminated TLS can say so, in X-Forwarded-Proto.
// (The client address itself: test/unit/client-ip.test.ts.)

describe('HTTPS behind a proxy', () => {
  const behindLoopback = createHttpsDetector('loopback');

  it('is believed from a trusted proxy, by the left-most X-Forwarded-Proto, in any letter case', () => {
    expect(behindLoopback('127.0.0.1', 'https')).toBe(true);
    expect(behindLoopback('127.0.0.1', 'HTTPS, http')).toBe(true);
    expect(behindLoopback('::1', ' https ')).toBe(true);
  });

  it('is not claimed by a proxy that forwarded plain HTTP', () => {
    expect(behindLoopback('127.0.0.1', 'http')).toBe(false);
    expect(behindLoopback('127.0.0.1', 'http, https')).toBe(false);
    expect(behindLoopback('127.0.0.1', null)).toBe(false);
  });

  it('is never believed from anyone else, nor when no proxy is trusted at all', () => {
    expect(behindLoopback('203.0.113.7', 'https')).toBe(false);
    expect(behindLoopback(undefined, 'https')).toBe(false);
    expect(createHttpsDetector(undefined)('127.0.0.1', 'https')).toBe(false);
    expect(createHttpsDetector('  ')('127.0.0.1', 'https')).toBe(false);
  });

  it('refuses a proxy list it cannot read, at creation', () => {
    expect(() => createHttpsDetector('10.0.0.0/99')).toThrow(/^Invalid TRUSTED_PROXIES/);
  });
});
