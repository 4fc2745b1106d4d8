import { describe, expect, it } from 'vitest';
import { resolveDataDir } from './data-dir.js';

describe('resolveDataDir', () => {
  it('takes the configured directory, made absolute', () => {
    expect(resolveDataDir({ dataDir: '/srv/simlock' })).toBe('/srv/simlock');
  });

  it('uses Application Support on macOS', () => {
    expect(resolveDataDir({ platform: 'darwin', home: '/Users/ci', env: {} })).toBe(
      '/Users/ci/Library/Application Support/simlock-agent',
    );
  });

  it('follows XDG_DATA_HOME on Linux, and ignores a relative one as the spec says', () => {
    expect(
      resolveDataDir({ platform: 'linux', home: '/home/ci', env: { XDG_DATA_HOME: '/data' } }),
    ).toBe('/data/simlock-agent');
    expect(
      resolveDataDir({ platform: 'linux', home: '/home/ci', env: { XDG_DATA_HOME: 'rel' } }),
    ).toBe('/home/ci/.local/share/simlock-agent');
  });
});
