// The soak's CPU figures: a process's role from its command line, its CPU time from /proc's stat.
import { describe, expect, it } from 'vitest';
import { parseStat, roleOf } from './cpu.js';

describe('roleOf', () => {
  it('names the control plane by its binary and simlock by the component launched', () => {
    expect(roleOf(['/cache/bin/kube-apiserver', '--etcd-servers=x'], false)).toBe('kube-apiserver');
    expect(roleOf(['/cache/bin/etcd', '--data-dir', 'd'], false)).toBe('etcd');
    expect(roleOf(['node', '/repo/bin/launch.mjs', 'controller', '--leader-elect'], false)).toBe(
      'controllers',
    );
    expect(roleOf(['node', '/repo/bin/launch.mjs', 'agent', '--config', 'c'], false)).toBe(
      'agents',
    );
    expect(roleOf(['node', '/repo/bin/launch.mjs', 'proxy'], false)).toBe('proxy');
    expect(roleOf(['ip', 'netns', 'exec', 'n'], false)).toBe('other');
    expect(roleOf(['node', 'bench/soak.ts'], true)).toBe('soak (load and watch)');
  });
});

describe('parseStat', () => {
  it('reads the parent and user + system time, whatever the command name holds', () => {
    const stat = '4242 (node (x) y) S 4000 4242 4242 0 -1 0 10 0 0 0 250 50 0 0 20 0 11 0 9';
    expect(parseStat(stat)).toEqual({ parent: 4000, seconds: 3 });
  });
});
