import { describe, expect, it } from 'vitest';
import { fitsDevice, noPhysicalMatch, osMatches, parseOsSpec } from './match.js';

describe('OS specs', () => {
  it.each([
    ['18.4', '18.4', true],
    ['18', '18.0', true],
    ['18', '18.4', false],
    ['>=18 <19', '18.4', true],
    ['>=17 <18', '18.4', false],
    ['>=34', '35', true],
    ['<34', '34', false],
    ['=18.4', '18.4', true],
  ])('%s against a device on %s matches: %s', (spec, os, expected) => {
    expect(osMatches(spec, os)).toBe(expected);
  });

  it('refuses what is not a version', () => {
    expect(parseOsSpec('banana')).toBeUndefined();
    expect(osMatches('banana', '18')).toBe(false);
  });
});

describe('device match', () => {
  const iphone = { platform: 'ios', model: 'iPhone 15 Pro', class: 'phone', os: '18.4' } as const;
  const ipad = { platform: 'ios', model: 'iPad Pro', class: 'tablet', os: '18.4' } as const;

  it('compares models in any case', () => {
    expect(fitsDevice({ platform: 'ios', model: 'iphone 15 PRO' }, iphone)).toBe(true);
  });

  it('reads no class and no model as phone', () => {
    expect(fitsDevice({ platform: 'ios' }, iphone)).toBe(true);
    expect(fitsDevice({ platform: 'ios' }, ipad)).toBe(false);
  });

  it('matches a tablet asked for by class, and by model', () => {
    expect(fitsDevice({ platform: 'ios', class: 'tablet' }, ipad)).toBe(true);
    expect(fitsDevice({ platform: 'ios', model: 'iPad Pro' }, ipad)).toBe(true);
  });

  it('never matches another platform', () => {
    expect(fitsDevice({ platform: 'android' }, iphone)).toBe(false);
  });
});

describe('noPhysicalMatch', () => {
  it('names the range form when the OS is an exact version', () => {
    const { message, details } = noPhysicalMatch({ platform: 'ios', os: '18' });
    expect(message).toContain('--os ">=18 <19"');
    expect(details).toEqual({ platform: 'ios', osVersion: '18' });
  });

  it('gives only the platform when the request names nothing else', () => {
    expect(noPhysicalMatch({ platform: 'android' }).details).toEqual({ platform: 'android' });
  });

  it('names the class', () => {
    expect(noPhysicalMatch({ platform: 'ios', class: 'tablet' }).message).toBe(
      'no enrolled physical device can match ios class tablet',
    );
  });
});
